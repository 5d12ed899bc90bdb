"""Every live stream's next frame in one heap keyed by absolute deadline: the scheduling core of the shared pacer.

A stream added at ``t0`` (seconds on a monotonic clock) has frame *i* due at ``t0 + t_ms[i] / 1000``, computed
from ``t0`` for every frame and never from the previous send, so however late a wake-up or a send is, later
deadlines do not move (no drift). The heap holds at most one entry per stream (its next frame), so a process
pacing N streams keeps N small entries, whatever the streams' lengths.

The owner hands ``run_due(now, send)`` the time of a wake-up; every frame due by then goes to ``send`` in deadline
order, and each stream's next frame takes its place in the heap as soon as ``send`` returns (one sift per
frame). A send that goes on in the background (``send`` returns None) leaves its stream without an entry until
``advance(key)``, so that stream cannot send its next frame out of order while the others go on; its frames that
fell due meanwhile are handed over at the next wake-up after it advances. Removing a stream (a stop, a closed
socket) takes effect immediately, also from inside ``send``: its stale entry is skipped when reached.

Pure: no clock, no event loop, no Django; the caller passes ``now``, which makes every guarantee testable with a
simulated clock (tests/playback/core/test_deadlines.py).
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Callable, Hashable, Sequence

SendDue = Callable[[Hashable, int, float], "bool | None"]


class _Track:
    __slots__ = ("key", "t_ms", "t0", "seq", "live")

    def __init__(self, key: Hashable, t_ms: Sequence[float], t0: float) -> None:
        self.key, self.t_ms, self.t0, self.seq, self.live = key, t_ms, t0, 0, True


class DeadlineHeap:
    """Live streams keyed by ``key``, ordered by their next frame's absolute deadline (ties: first added first)."""

    def __init__(self) -> None:
        self._heap: list[tuple[float, int, _Track, int]] = []
        self._tracks: dict[Hashable, _Track] = {}
        self._order = itertools.count()

    def __len__(self) -> int:
        return len(self._tracks)

    def __contains__(self, key: Hashable) -> bool:
        return key in self._tracks

    def add(self, key: Hashable, t_ms: Sequence[float], t0: float) -> bool:
        """Start pacing ``key``: frame ``i`` is due at ``t0 + t_ms[i] / 1000``. ``t_ms`` must not decrease.
        False (nothing is kept) for a stream without frames."""
        if key in self._tracks:
            raise ValueError(f"stream {key!r} is already being paced")
        if any(b < a for a, b in itertools.pairwise(t_ms)):
            raise ValueError(f"stream {key!r}: frame times must not decrease")
        if not t_ms:
            return False
        track = _Track(key, t_ms, t0)
        self._tracks[key] = track
        self._push(track)
        return True

    def remove(self, key: Hashable) -> bool:
        """Stop pacing ``key`` now (nothing more of it is popped); False when it was not being paced."""
        track = self._tracks.pop(key, None)
        if track is None:
            return False
        track.live = False
        return True

    def next_deadline(self) -> float | None:
        """The earliest deadline of a live stream's next frame, or None when nothing is waiting."""
        heap = self._heap
        while heap and not self._current(heap[0]):
            heapq.heappop(heap)
        return heap[0][0] if heap else None

    def run_due(self, now: float, send: SendDue) -> int:
        """Call ``send(key, seq, due_ms)`` for every frame due at or before ``now`` (``due_ms``: ms after the
        stream's start), streams in the order of their earliest due frame (ties: the order they were added);
        returns how many. A stream with several frames overdue (a late wake-up) sends them back to back, as a
        stream's own task would: one heap sift per stream, and its socket is written while it is warm.

        ``send`` returns True once the frame was sent (the stream's next frame is scheduled, or the stream is
        done after its last), None when the send goes on elsewhere (the stream waits for ``advance(key)``);
        a stream ``remove``\\ d meanwhile, from inside ``send`` too, is left alone whatever it returns."""
        heap = self._heap
        order = self._order
        count = 0
        while heap:
            entry = heap[0]
            deadline, _, track, seq = entry
            if not track.live or track.seq != seq:
                heapq.heappop(heap)
                continue
            if deadline > now:
                break
            t_ms, t0, key = track.t_ms, track.t0, track.key
            last = len(t_ms) - 1
            while True:  # this stream's frames that are already overdue go out back to back, in order
                sent = send(key, seq, t_ms[seq])
                count += 1
                if not track.live or sent is None or seq == last:
                    break
                seq += 1
                deadline = t0 + t_ms[seq] / 1000.0
                if deadline > now:
                    break
            if not track.live:
                continue  # removed by send: its entry is stale now
            if sent is None:
                self._take_out(entry)
                track.seq = -1 - seq  # held: no entry, and none of its old ones is current
                continue
            if seq == last and deadline <= now:
                self._finish(track)  # its last frame went out
                continue
            track.seq = seq
            new = (deadline, next(order), track, seq)
            if heap[0] is entry:
                heapq.heapreplace(heap, new)
            else:  # send added something earlier: the old entry is stale (its seq moved on)
                heapq.heappush(heap, new)
        return count

    def advance(self, key: Hashable) -> bool:
        """The send ``run_due`` left going on for ``key`` has ended: schedule the stream's next frame. False (and
        the stream is gone) when that was its last frame, or when the stream was removed meanwhile."""
        track = self._tracks.get(key)
        if track is None:
            return False
        if track.seq >= 0:
            raise ValueError(f"stream {key!r} has no send going on")
        track.seq = -track.seq  # the held frame's seq + 1
        if track.seq >= len(track.t_ms):
            self._finish(track)
            return False
        self._push(track)
        return True

    def _finish(self, track: _Track) -> None:
        del self._tracks[track.key]
        track.live = False

    def _take_out(self, entry: tuple) -> None:
        heap = self._heap
        if heap and heap[0] is entry:
            heapq.heappop(heap)
        else:
            heap.remove(entry)
            heapq.heapify(heap)

    def _push(self, track: _Track) -> None:
        deadline = track.t0 + track.t_ms[track.seq] / 1000.0
        heapq.heappush(self._heap, (deadline, next(self._order), track, track.seq))

    @staticmethod
    def _current(entry: tuple[float, int, _Track, int]) -> bool:
        track = entry[2]
        return track.live and track.seq == entry[3]
