"""The shared pacer's scheduling core on a simulated clock: deadline order, absolute deadlines that never drift
however late the wake-ups, clean removal, and hundreds of streams due at the same instant."""

import random

import pytest

from playback.core.deadlines import DeadlineHeap


def _drain(heap: DeadlineHeap, now: float) -> list:
    """Everything due by ``now``, each stream advanced after its frame (what the pacer's timer does)."""
    out = []
    while (due := heap.pop_due(now)) is not None:
        out.append(due)
        heap.advance(due.key)
    return out


def test_frames_come_out_in_deadline_order_across_streams():
    heap = DeadlineHeap()
    heap.add("a", [0.0, 30.0, 60.0], t0=10.0)
    heap.add("b", [10.0, 20.0, 70.0], t0=10.0)
    heap.add("c", [5.0], t0=10.02)  # starts 20 ms later: due at 10.025
    assert heap.next_deadline() == 10.0
    order = [(d.key, d.seq) for d in _drain(heap, 11.0)]
    assert order == [("a", 0), ("b", 0), ("b", 1), ("c", 0), ("a", 1), ("a", 2), ("b", 2)]
    assert len(heap) == 0 and heap.next_deadline() is None


def test_nothing_is_popped_before_its_deadline():
    heap = DeadlineHeap()
    heap.add("a", [0.0, 25.0, 50.0], t0=100.0)
    assert heap.pop_due(99.999) is None
    assert [d.seq for d in _drain(heap, 100.0)] == [0]
    assert heap.pop_due(100.0249) is None
    assert heap.next_deadline() == pytest.approx(100.025)
    assert [d.seq for d in _drain(heap, 100.025)] == [1]


def test_deadlines_are_absolute_and_do_not_drift_over_many_late_ticks():
    """10,000 frames at 40/s with every wake-up and every send late by up to 3 ms: each frame's deadline is
    still exactly t0 + t_ms / 1000, and the lateness at the end is no larger than at the start."""
    rng = random.Random(7)
    t_ms = [i * 25.0 for i in range(10_000)]
    heap = DeadlineHeap()
    heap.add("s", t_ms, t0=50.0)
    now, lateness = 50.0, []
    while (deadline := heap.next_deadline()) is not None:
        now = max(now, deadline) + rng.uniform(0, 0.002)  # the timer fires late
        while (due := heap.pop_due(now)) is not None:
            assert due.deadline == 50.0 + t_ms[due.seq] / 1000.0
            lateness.append(now - due.deadline)
            now += rng.uniform(0, 0.001)  # the send takes time
            heap.advance(due.key)
    assert len(lateness) == 10_000
    assert max(lateness) < 0.003
    assert sum(lateness[-1000:]) / 1000 - sum(lateness[:1000]) / 1000 < 0.0005


def test_a_late_wake_sends_every_overdue_frame_once_in_order_and_later_deadlines_keep_their_place():
    heap = DeadlineHeap()
    heap.add("s", [0.0, 10.0, 20.0, 30.0, 100.0], t0=0.0)
    late = _drain(heap, 0.035)  # woke 35 ms late: four frames are overdue
    assert [d.seq for d in late] == [0, 1, 2, 3]
    assert heap.next_deadline() == pytest.approx(0.1)  # not 0.135: the stall was not added to it


def test_a_stream_waiting_for_its_send_is_not_popped_again_until_it_advances():
    heap = DeadlineHeap()
    heap.add("slow", [0.0, 1.0, 2.0], t0=0.0)
    heap.add("fast", [0.0, 1.0, 2.0], t0=0.0)
    first = heap.pop_due(1.0)
    assert (first.key, first.seq) == ("slow", 0)  # its send is in progress: no advance yet
    others = _drain(heap, 1.0)
    assert [(d.key, d.seq) for d in others] == [("fast", 0), ("fast", 1), ("fast", 2)]
    heap.advance("slow")
    assert [(d.key, d.seq) for d in _drain(heap, 1.0)] == [("slow", 1), ("slow", 2)]


def test_a_removed_stream_is_never_popped_again_and_the_others_go_on():
    heap = DeadlineHeap()
    for key in "abc":
        heap.add(key, [0.0, 10.0, 20.0], t0=0.0)
    assert [(d.key, d.seq) for d in _drain(heap, 0.0)] == [("a", 0), ("b", 0), ("c", 0)]
    assert heap.remove("b") and not heap.remove("b")
    assert "b" not in heap and len(heap) == 2
    assert [(d.key, d.seq) for d in _drain(heap, 1.0)] == [("a", 1), ("c", 1), ("a", 2), ("c", 2)]


def test_removing_a_stream_mid_send_drops_its_next_frames():
    heap = DeadlineHeap()
    heap.add("a", [0.0, 10.0], t0=0.0)
    due = heap.pop_due(0.0)
    heap.remove("a")
    assert not heap.advance(due.key)
    assert heap.pop_due(1.0) is None and heap.next_deadline() is None


def test_five_hundred_streams_due_at_the_same_instant_all_come_out_of_one_wake_in_the_order_added():
    heap = DeadlineHeap()
    for k in range(500):
        heap.add(k, [0.0, 25.0], t0=3.0)
    batch = _drain(heap, 3.0)
    assert [d.key for d in batch] == list(range(500)) and {d.seq for d in batch} == {0}
    assert heap.next_deadline() == pytest.approx(3.025)
    assert [d.key for d in _drain(heap, 3.025)] == list(range(500))
    assert len(heap) == 0


def test_bad_streams_are_refused_and_an_empty_one_is_not_kept():
    heap = DeadlineHeap()
    assert heap.add("a", [0.0], t0=0.0)
    with pytest.raises(ValueError, match="already being paced"):
        heap.add("a", [0.0], t0=0.0)
    with pytest.raises(ValueError, match="must not decrease"):
        heap.add("b", [10.0, 5.0], t0=0.0)
    assert not heap.add("c", [], t0=0.0)
    assert "c" not in heap and len(heap) == 1
