"""The shared pacer's scheduling core on a simulated clock: deadline order, absolute deadlines that never drift
however late the wake-ups and the sends, a stream whose send goes on waits alone, clean removal, and hundreds of
streams due at the same instant."""

import random

import pytest

from playback.core.deadlines import DeadlineHeap


def _drain(heap: DeadlineHeap, now: float, hold: set = frozenset()) -> list[tuple]:
    """What one wake-up at ``now`` sends, as (key, seq, due_ms); the sends of streams in ``hold`` go on."""
    out = []

    def send(key, seq, due_ms):
        out.append((key, seq, due_ms))
        return None if key in hold else True

    assert heap.run_due(now, send) == len(out)
    return out


def test_frames_come_out_in_deadline_order_across_streams_when_the_wakes_are_on_time():
    heap = DeadlineHeap()
    heap.add("a", [0.0, 30.0, 60.0], t0=10.0)
    heap.add("b", [10.0, 20.0, 70.0], t0=10.0)
    heap.add("c", [5.0], t0=10.02)  # starts 20 ms later: due at 10.025
    order = []
    while (deadline := heap.next_deadline()) is not None:
        order += [(k, s) for k, s, _ in _drain(heap, deadline)]
    assert order == [("a", 0), ("b", 0), ("b", 1), ("c", 0), ("a", 1), ("a", 2), ("b", 2)]
    assert len(heap) == 0 and heap.next_deadline() is None


def test_after_a_late_wake_each_stream_sends_its_overdue_frames_back_to_back_earliest_stream_first():
    heap = DeadlineHeap()
    heap.add("a", [0.0, 30.0, 60.0], t0=10.0)
    heap.add("b", [10.0, 20.0, 70.0], t0=10.0)
    assert [(k, s) for k, s, _ in _drain(heap, 10.065)] == [("a", 0), ("a", 1), ("a", 2), ("b", 0), ("b", 1)]
    assert heap.next_deadline() == pytest.approx(10.07)  # b's last frame keeps its own deadline


def test_nothing_is_sent_before_its_deadline():
    heap = DeadlineHeap()
    heap.add("a", [0.0, 25.0, 50.0], t0=100.0)
    assert _drain(heap, 99.999) == []
    assert _drain(heap, 100.0) == [("a", 0, 0.0)]
    assert _drain(heap, 100.0249) == []
    assert heap.next_deadline() == pytest.approx(100.025)
    assert _drain(heap, 100.025) == [("a", 1, 25.0)]


def test_deadlines_are_absolute_and_do_not_drift_over_many_late_wakes_and_slow_sends():
    """10,000 frames at 40/s; every wake-up late by up to 2 ms and every send taking up to 1 ms: each frame is
    still judged against t0 + t_ms / 1000 exactly, and the lateness at the end is no larger than at the start."""
    rng = random.Random(7)
    t_ms = [i * 25.0 for i in range(10_000)]
    heap = DeadlineHeap()
    heap.add("s", t_ms, t0=50.0)
    clock = [50.0]
    lateness = []

    def send(key, seq, due_ms):
        assert due_ms == t_ms[seq]
        lateness.append(clock[0] - (50.0 + due_ms / 1000.0))
        clock[0] += rng.uniform(0, 0.001)  # the send takes time
        return True

    while (deadline := heap.next_deadline()) is not None:
        clock[0] = max(clock[0], deadline) + rng.uniform(0, 0.002)  # the timer fires late
        heap.run_due(clock[0], send)
    assert len(lateness) == 10_000 and min(lateness) >= 0
    assert max(lateness) < 0.003
    assert sum(lateness[-1000:]) / 1000 - sum(lateness[:1000]) / 1000 < 0.0005


def test_a_late_wake_sends_every_overdue_frame_once_in_order_and_later_deadlines_keep_their_place():
    heap = DeadlineHeap()
    heap.add("s", [0.0, 10.0, 20.0, 30.0, 100.0], t0=0.0)
    assert [s for _, s, _ in _drain(heap, 0.035)] == [0, 1, 2, 3]  # woke 35 ms late: four frames overdue
    assert heap.next_deadline() == pytest.approx(0.1)  # not 0.135: the stall was not added to it


def test_a_stream_whose_send_goes_on_waits_alone_and_resumes_in_order():
    heap = DeadlineHeap()
    heap.add("slow", [0.0, 1.0, 2.0], t0=0.0)
    heap.add("fast", [0.0, 1.0, 2.0], t0=0.0)
    assert _drain(heap, 1.0, hold={"slow"}) == [("slow", 0, 0.0), ("fast", 0, 0.0), ("fast", 1, 1.0),
                                                  ("fast", 2, 2.0)]
    assert _drain(heap, 5.0) == [] and "slow" in heap  # waiting for its send: nothing of it is due
    assert heap.advance("slow")
    with pytest.raises(ValueError, match="no send going on"):
        heap.advance("slow")
    assert _drain(heap, 5.0) == [("slow", 1, 1.0), ("slow", 2, 2.0)]
    assert len(heap) == 0


def test_a_held_last_frame_finishes_the_stream_when_it_advances():
    heap = DeadlineHeap()
    heap.add("a", [0.0], t0=0.0)
    _drain(heap, 0.0, hold={"a"})
    assert not heap.advance("a") and "a" not in heap


def test_a_removed_stream_is_never_sent_again_and_the_others_go_on():
    heap = DeadlineHeap()
    for key in "abc":
        heap.add(key, [0.0, 10.0, 20.0], t0=0.0)
    assert [(k, s) for k, s, _ in _drain(heap, 0.0)] == [("a", 0), ("b", 0), ("c", 0)]
    assert heap.remove("b") and not heap.remove("b")
    assert "b" not in heap and len(heap) == 2
    assert [(k, s) for k, s, _ in _drain(heap, 1.0)] == [("a", 1), ("a", 2), ("c", 1), ("c", 2)]


def test_a_stream_removed_from_inside_its_send_or_while_its_send_goes_on_stops_there():
    heap = DeadlineHeap()
    heap.add("a", [0.0, 1000.0, 2000.0], t0=0.0)
    heap.add("b", [0.0, 1000.0, 2000.0], t0=0.0)
    sent = []

    def send(key, seq, due_ms):
        sent.append((key, seq))
        if key == "a" and seq == 1:
            heap.remove("a")  # the socket closed during this send
        return True

    heap.run_due(1.0, send)
    assert sent == [("a", 0), ("a", 1), ("b", 0), ("b", 1)]  # nothing of a after the send that removed it
    assert _drain(heap, 2.0, hold={"b"}) == [("b", 2, 2000.0)]  # b's last send goes on ... and b is stopped
    heap.add("c", [0.0], t0=2.0)
    assert _drain(heap, 2.0, hold={"b"}) == [("c", 0, 0.0)]
    assert heap.remove("b") and not heap.advance("b")
    assert _drain(heap, 10.0) == [] and len(heap) == 0 and heap.next_deadline() is None


def test_five_hundred_streams_due_at_the_same_instant_all_go_out_in_one_wake_in_the_order_added():
    heap = DeadlineHeap()
    for k in range(500):
        heap.add(k, [0.0, 25.0], t0=3.0)
    batch = _drain(heap, 3.0)
    assert [k for k, _, _ in batch] == list(range(500)) and {s for _, s, _ in batch} == {0}
    assert heap.next_deadline() == pytest.approx(3.025)
    assert [k for k, _, _ in _drain(heap, 3.025)] == list(range(500))
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
