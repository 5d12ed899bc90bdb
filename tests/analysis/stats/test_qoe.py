"""Andes QoE and the Etalon fluidity index on hand-built streams."""

from __future__ import annotations

import math

import pytest

from analysis.stats.qoe import andes_qoe, andes_qoe_from_times, fluidity_from_times, fluidity_index, token_times
from playback.core.stream import Piece, Stream


def stream_at(times, tokens=None):
    tokens = tokens or [1] * len(times)
    return Stream(pieces=tuple(Piece(text="w ", t_ms=t, tokens=k) for t, k in zip(times, tokens)))


def test_token_times_count_burst_tokens_and_wait_for_visible_text():
    s = Stream(pieces=(
        Piece("", 0.0, "content", 0),  # role chunk: no tokens
        Piece("Hi", 100.0, "content", 3),  # a burst of three tokens
        Piece("", 150.0, "content", 1),  # half a UTF-8 character
        Piece("é", 180.0, "content", 1),  # ... completed here
        Piece("think", 190.0, "reasoning", 1),
        Piece("", 200.0, "content", 1),  # never shown
    ))
    assert token_times(s) == [100.0, 100.0, 100.0, 180.0, 180.0]
    assert token_times(s, "reasoning") == [190.0]


def test_andes_qoe_is_one_when_tokens_are_on_time_or_early():
    on_time = [1000.0 + 200.0 * i for i in range(10)]
    assert andes_qoe_from_times(on_time, ttft_ms=1000, tds_tokens_per_s=5) == pytest.approx(1.0)
    assert andes_qoe_from_times([10.0] * 10, ttft_ms=1000, tds_tokens_per_s=5) == pytest.approx(1.0)


def test_andes_qoe_of_a_one_slot_delay():
    # expected 1, 2, 3 s; actual 2, 3, 4 s; horizon 4 s: areas 2+1+0 over 3+2+1
    assert andes_qoe_from_times([2000.0, 3000.0, 4000.0], ttft_ms=1000, tds_tokens_per_s=1) == pytest.approx(0.5)


def test_andes_buffer_pacing_penalises_a_stall_more_than_clipping():
    # token 1 stalls until 5 s, then the rest arrive at once
    arrivals = [1000.0] + [5000.0] * 4
    clip = andes_qoe_from_times(arrivals, ttft_ms=1000, tds_tokens_per_s=1, pacing="clip")
    buffered = andes_qoe_from_times(arrivals, ttft_ms=1000, tds_tokens_per_s=1, pacing="buffer")
    # clip: digested 1,5,5,5,5 s; expected 1..5 s; horizon 5 s: (4+0+0+0+0) / (4+3+2+1+0)
    assert clip == pytest.approx(0.4)
    # buffer: digested 1,5,6,7,8 s; horizon 8 s: (7+3+2+1+0) / (7+6+5+4+3)
    assert buffered == pytest.approx(13 / 25)


def test_andes_qoe_of_a_stream_and_of_nothing():
    assert andes_qoe(stream_at([1000.0, 1200.0, 1400.0])) == pytest.approx(1.0)
    assert andes_qoe(stream_at([3000.0, 3200.0, 3400.0])) < 0.5
    assert andes_qoe(Stream(pieces=())) is None


def test_fluidity_counts_missed_deadlines_with_carried_slack():
    # deadlines 1000 ms then 100 ms per token:
    # 500 ms meets (slack 500); +100 meets (slack 500); +700 misses (700-500)//100 = 2; +50 meets
    f = fluidity_from_times([500.0, 600.0, 1300.0, 1350.0], ttft_deadline_ms=1000, tbt_deadline_ms=100)
    assert (f.missed, f.total) == (2, 5)
    assert f.fluidity == pytest.approx(0.6)


def test_fluidity_late_first_token_misses_one_plus_whole_periods():
    f = fluidity_from_times([1250.0], ttft_deadline_ms=1000, tbt_deadline_ms=100)
    assert (f.missed, f.total, f.fluidity) == (3, 3, 0.0)


def test_fluidity_of_a_smooth_stream_is_one_and_bursts_build_slack():
    assert fluidity_index(stream_at([500.0, 600.0, 700.0]), tbt_deadline_ms=100).fluidity == 1.0
    burst = stream_at([500.0, 900.0], tokens=[4, 1])  # 3 buffered tokens bank 300 ms of slack
    assert fluidity_index(burst, ttft_deadline_ms=500, tbt_deadline_ms=100).fluidity == 1.0
    no_burst = stream_at([500.0, 900.0])  # a 400 ms gap with no slack: four 100 ms periods missed
    assert fluidity_index(no_burst, ttft_deadline_ms=500, tbt_deadline_ms=100).missed == 4


def test_bad_parameters_are_rejected():
    with pytest.raises(ValueError):
        fluidity_from_times([1.0], tbt_deadline_ms=0)
    with pytest.raises(ValueError):
        andes_qoe_from_times([1.0], tds_tokens_per_s=0)


def test_a_stream_with_no_visible_tokens_has_no_fluidity_and_no_andes_qoe():
    f = fluidity_from_times([])
    assert math.isnan(f.fluidity) and (f.missed, f.total) == (0, 0)
    assert andes_qoe_from_times([]) is None
