"""Every live stream's next frame in one heap keyed by absolute deadline: the scheduling core of the shared pacer.

A stream added at ``t0`` (seconds on a monotonic clock) has frame *i* due at ``t0 + t_ms[i] / 1000``, computed
from ``t0`` for every frame and never from the previous send, so however late a wake-up or a send is, later
deadlines do not move (no drift). The heap holds at most one entry per stream (its next frame), so a process
pacing N streams keeps N small entries, whatever the streams' lengths.

The owner pops what is due (``pop_due(now)``), sends it, and then ``advance``\\ s the stream, which puts its next
frame in the heap (or reports it finished). A stream whose send is still in progress therefore has no entry and
cannot send its next frame out of order; its frames that fell due meanwhile are popped at once when it advances.
Removing a stream (a stop, a closed socket) takes effect immediately: its stale entry is skipped when reached.

Pure: no clock, no event loop, no Django; the caller passes ``now``, which makes every guarantee testable with a
simulated clock (tests/playback/core/test_deadlines.py).
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Hashable, Sequence
from typing import NamedTuple


class Due(NamedTuple):
    """Frame ``seq`` of stream ``key`` was due at ``due_ms`` (ms after the stream's start), ``deadline`` in s."""

    key: Hashable
    seq: int
    due_ms: float
    deadline: float


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

    def pop_due(self, now: float) -> Due | None:
        """The earliest frame due at or before ``now``, taken out of the heap; None when none is due yet.

        The stream then has no entry until ``advance(key)``: its next frame cannot be popped before this one
        was handled."""
        heap = self._heap
        while heap:
            entry = heap[0]
            if not self._current(entry):
                heapq.heappop(heap)
                continue
            if entry[0] > now:
                return None
            heapq.heappop(heap)
            track = entry[2]
            return Due(track.key, track.seq, track.t_ms[track.seq], entry[0])
        return None

    def advance(self, key: Hashable) -> bool:
        """The popped frame of ``key`` was handled: schedule its next one. False (and the stream is gone) when
        that was its last frame or the stream was removed meanwhile."""
        track = self._tracks.get(key)
        if track is None:
            return False
        track.seq += 1
        if track.seq >= len(track.t_ms):
            del self._tracks[key]
            track.live = False
            return False
        self._push(track)
        return True

    def _push(self, track: _Track) -> None:
        deadline = track.t0 + track.t_ms[track.seq] / 1000.0
        heapq.heappush(self._heap, (deadline, next(self._order), track, track.seq))

    @staticmethod
    def _current(entry: tuple[float, int, _Track, int]) -> bool:
        track = entry[2]
        return track.live and track.seq == entry[3]
