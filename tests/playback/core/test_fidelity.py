"""Fidelity summaries from hand-computed paint logs."""

import math

import pytest

from playback.core.fidelity import DEFAULT_BOUND_MS, percentile, seen_stalls, summarize


def _e(seq, t_ms, paint_ms, **extra):
    return {"seq": seq, "t_ms": t_ms, "recv_ms": t_ms, "paint_ms": paint_ms, "chars": 1, "hidden": False, **extra}


def test_percentiles_interpolate_between_order_statistics():
    assert percentile([4.0, 1.0, 3.0, 2.0], 50) == 2.5
    assert percentile([0.0, 10.0], 95) == pytest.approx(9.5)
    assert percentile([7.0], 99) == 7.0
    assert math.isnan(percentile([], 50))


def test_lateness_is_painted_minus_scheduled_over_visible_frames():
    # lateness: 2, 4, 6, 8, 30 ms; the hidden frame (500 ms late) does not count
    entries = [_e(0, 0, 2), _e(1, 25, 29), _e(2, 50, 56), _e(3, 75, 83), _e(4, 100, 130),
               _e(5, 125, 625, hidden=True)]
    f = summarize(entries)
    assert (f.frames, f.visible_frames, f.hidden_frames) == (6, 5, 1)
    assert f.p50_ms == 6.0
    assert f.p95_ms == pytest.approx(8 + 0.8 * 22)  # between 8 and 30
    assert f.max_ms == 30.0
    assert f.bound_ms == DEFAULT_BOUND_MS == pytest.approx(33.4)
    assert f.flagged is False


def test_a_playback_is_flagged_when_p95_exceeds_the_bound():
    entries = [_e(i, 25 * i, 25 * i + 40) for i in range(20)]
    assert summarize(entries).flagged is True
    assert summarize(entries, bound_ms=50).flagged is False


def test_long_animation_frames_count_as_dropped_frames_unless_the_client_reports_them():
    entries = [_e(0, 0, 1, frame_ms=16.7), _e(1, 25, 26, frame_ms=33.0), _e(2, 50, 51, frame_ms=50.1),
               _e(3, 75, 76, frame_ms=83.5), _e(4, 100, 101, frame_ms=40.0, dropped=5)]
    f = summarize(entries)
    # 33.0 ms is not longer than two frames; 50.1 -> 2 dropped; 83.5 -> 4 dropped; the reported 5 wins
    assert f.long_frames == 3
    assert f.dropped_frames == 2 + 4 + 5


def test_visibility_changes_count_each_switch_between_hidden_and_visible():
    entries = [_e(0, 0, 1), _e(1, 1, 2, hidden=True), _e(2, 2, 3, hidden=True), _e(3, 3, 4), _e(4, 4, 5, hidden=True)]
    assert summarize(entries).visibility_changes == 3


def test_a_repeated_seq_counts_once_and_entries_may_arrive_out_of_order():
    entries = [_e(1, 25, 35), _e(0, 0, 5), _e(1, 25, 99)]
    f = summarize(entries)
    assert f.frames == 2 and f.max_ms == 10.0


def test_an_empty_log_has_no_lateness_and_is_not_flagged():
    f = summarize([])
    assert f.frames == 0 and f.flagged is False
    assert f.as_dict()["p95_ms"] is None


def test_with_design_times_the_bound_applies_to_lateness_beyond_the_strategys_design():
    # a smooth play: every frame painted 120 ms after its schedule, as the strategy meant (design 118 ms after)
    entries = [_e(i, 25 * i, 25 * i + 120, design_ms=25 * i + 118) for i in range(40)]
    f = summarize(entries)
    assert f.p95_ms == pytest.approx(120)  # against the schedule, as before
    assert f.late_p95_ms == pytest.approx(2)
    assert f.flagged is False and f.stalls_seen == 0
    late = [_e(i, 25 * i, 25 * i + 170, design_ms=25 * i + 118) for i in range(40)]  # 52 ms beyond design
    assert summarize(late).flagged is True


def test_a_stall_the_participant_saw_is_flagged_whatever_the_strategy():
    # token at 25 ms per frame, all on time except one 100 ms freeze: p95 is fine, the stall is not
    paint = [25 * i + 2 for i in range(40)]
    for i in range(20, 23):
        paint[i] = paint[23]  # frames 20-22 painted with 23, 85 ms after frame 19
    entries = [_e(i, 25 * i, paint[i], design_ms=25 * i) for i in range(40)]
    f = summarize(entries)
    assert f.late_p95_ms < DEFAULT_BOUND_MS
    assert f.stalls_seen == 1 and f.longest_stall_ms == pytest.approx(100)
    assert f.flagged is True


def test_a_hold_the_design_meant_is_not_a_stall():
    # word strategy: a long word held 200 ms by design, painted when its boundary came
    entries = [_e(i, 25 * i, 200.0 + 2, design_ms=200.0) for i in range(8)] + \
              [_e(8 + i, 225 + 25 * i, 225 + 25 * i + 2, design_ms=225 + 25 * i) for i in range(10)]
    f = summarize(entries)
    assert f.stalls_seen == 0 and f.flagged is False


def test_seen_stalls_compare_each_gap_with_the_designs_longest_gap_inside_it():
    design = [16.7 * k for k in range(20)]
    assert seen_stalls([0, 16.7, 33.4, 50.1], design) == []
    ((start, gap, design_gap),) = seen_stalls([0, 16.7, 100.2], design)
    assert (start, gap) == (16.7, pytest.approx(83.5)) and design_gap == pytest.approx(16.7, abs=0.01)
    assert seen_stalls([0, 100], [0, 100]) == []  # the design had no paint inside the gap
