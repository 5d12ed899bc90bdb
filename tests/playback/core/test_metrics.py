"""Metric definitions, each checked on a stream computed by hand."""

import pytest

from playback.core import metrics
from playback.core.stream import Piece, Stream


def _s(*pieces, output_tokens=None):
    return Stream(pieces=tuple(Piece(*p) for p in pieces), output_tokens=output_tokens)


def test_ttft_is_first_content_piece():
    s = _s(("", 50.0), ("Hi", 200.0), (" there", 300.0))
    assert metrics.compute(s).ttft_ms == 200.0


def test_a_role_only_empty_first_chunk_is_not_content():
    s = _s(("", 10.0, "content", 0), ("A", 120.0))
    m = metrics.compute(s)
    assert m.ttft_ms == 120.0 and m.content_pieces == 1


def test_time_to_first_reasoning_piece_is_reported_beside_ttft():
    s = _s(("Let me think", 80.0, "reasoning", 3), ("Answer", 900.0), (".", 950.0))
    m = metrics.compute(s)
    assert (m.ttfr_ms, m.ttft_ms) == (80.0, 900.0)
    assert m.output_tokens == 2  # reasoning tokens are not content


def test_decode_rate_excludes_ttft_and_the_first_token():
    # 5 tokens, first at 100 ms, last at 500 ms: (5 - 1) / 0.4 s = 10 tokens/s
    s = _s(("a", 100.0), ("b", 200.0), ("c", 300.0), ("d", 400.0), ("e", 500.0))
    m = metrics.compute(s)
    assert m.tokens_per_s == pytest.approx(10.0)
    assert m.e2e_ms == 500.0


def test_recorded_output_token_count_overrides_the_pieces():
    # two SSE chunks carrying 9 tokens in all, 0.5 s apart -> (9 - 1) / 0.5 = 16 tokens/s
    s = _s(("Hello wor", 100.0, "content", 4), ("ld, friend", 600.0, "content", 5), output_tokens=9)
    assert metrics.compute(s).tokens_per_s == pytest.approx(16.0)


def test_tokens_carried_by_pieces_count_when_nothing_was_recorded():
    s = _s(("你", 100.0, "content", 1), ("", 150.0, "content", 1), ("好", 200.0, "content", 1))
    m = metrics.compute(s)
    assert m.output_tokens == 3
    assert m.tokens_per_s == pytest.approx(20.0)  # (3 - 1) / 0.1 s


def test_chars_and_words_per_second_count_cjk_per_character():
    # after the first piece: "世界和平" = 4 chars and 4 words over 0.2 s
    s = _s(("你好", 100.0), ("世界", 200.0), ("和平", 300.0))
    m = metrics.compute(s)
    assert (m.chars, m.words) == (6, 6)
    assert m.chars_per_s == pytest.approx(20.0)
    assert m.words_per_s == pytest.approx(20.0)


def test_english_words_are_whitespace_separated():
    s = _s(("Hello", 0.0), (" big", 500.0), (" world", 1000.0))
    m = metrics.compute(s)
    assert m.words == 3
    assert m.words_per_s == pytest.approx(2.0)
    assert m.chars_per_s == pytest.approx(10.0)  # " big world" = 10 characters in 1 s


def test_itl_statistics_are_over_gaps_between_content_pieces():
    # gaps 10, 20, 30, 40
    s = _s(("a", 0.0), ("b", 10.0), ("c", 30.0), ("d", 60.0), ("e", 100.0))
    m = metrics.compute(s)
    assert m.itl_mean_ms == pytest.approx(25.0)
    assert m.itl_median_ms == pytest.approx(25.0)
    assert m.itl_p95_ms == pytest.approx(38.5)  # numpy linear: 30 + 0.85 * 10
    assert m.itl_p99_ms == pytest.approx(39.7)
    assert m.itl_cv == pytest.approx((125 ** 0.5) / 25.0)  # population sd of 10..40 is sqrt(125)


def test_empty_pieces_do_not_make_gaps():
    s = _s(("a", 0.0), ("", 5.0), ("b", 10.0))
    assert metrics.compute(s).itl_mean_ms == 10.0


def test_stalls_are_gaps_above_the_threshold_with_their_total():
    s = _s(("a", 0.0), ("b", 100.0), ("c", 400.0), ("d", 450.0), ("e", 1450.0))
    m = metrics.compute(s)
    assert (m.stall_count, m.stall_total_ms) == (2, 1300.0)
    assert metrics.compute(s, stall_threshold_ms=500).stall_count == 1


def test_a_gap_exactly_at_the_threshold_is_not_a_stall():
    assert metrics.compute(_s(("a", 0.0), ("b", 250.0))).stall_count == 0


def test_a_single_piece_has_no_rate_and_no_itl():
    m = metrics.compute(_s(("only", 300.0)))
    assert (m.ttft_ms, m.e2e_ms, m.tokens_per_s, m.itl_mean_ms, m.itl_cv) == (300.0, 300.0, None, None, None)


def test_an_empty_stream_has_no_times():
    m = metrics.compute(Stream(pieces=()))
    assert (m.ttft_ms, m.e2e_ms, m.output_tokens, m.stall_count) == (None, None, 0, 0)


def test_percentile_matches_numpy_linear_interpolation():
    import numpy as np

    values = [3.0, 1.0, 4.0, 1.0, 5.0, 9.0, 2.0, 6.0]
    for q in (0, 10, 50, 95, 99, 100):
        assert metrics.percentile(sorted(values), q) == pytest.approx(np.percentile(values, q))
