"""Postpone the garbage collector's full passes while live streams play, for a bounded time.

Why: a full (generation 2) pass walks every tracked object of the process and stops the event loop for its whole
length. A Daphne process holding 500 live sockets has enough objects for that to take 80-200 ms of wall time
here (a ``gc.callbacks`` probe during benchmarks/pacing.py at 500 streams, issue 44, on a loaded machine), and
the garbage of closing sockets is what sets one off: with sockets coming and going while others play (a study's
normal day) such a pass lands on the streams still playing, every due frame as late as the pass is long. In the
benchmark's probed runs it came only after the last stream had ended, so there this is a guard, not a measured
gain. Young passes (generations 0 and 1) stay as they are: they are short and keep the young objects' garbage
in check.

How: while at least one live stream plays, the collector's third threshold is raised out of reach, so it never
starts a full pass by itself. The owner calls ``check(now)`` from its timer: once ``max_defer_s`` has gone by
since the deferral began and a full pass has become due meanwhile (the collector's count of middle passes
passed the saved threshold), it runs that pass itself, at once (a pause it would have had anyway, no more often
than once per ``max_defer_s``), and defers again. When the last stream ends the saved threshold is restored, so
the collector does what it always did while nothing is paced. ``max_defer_s <= 0`` turns the deferral off.

Pure: the standard library's ``gc`` and the caller's clock only.
"""

from __future__ import annotations

import gc

_OUT_OF_REACH = 1 << 30


class FullCollectionDeferral:
    """Raises the collector's full-pass threshold while ``busy``; ``check`` runs a due full pass at most once per
    ``max_defer_s``; ``idle`` restores the threshold. ``forced`` counts the full passes run by ``check``."""

    def __init__(self, max_defer_s: float) -> None:
        self.max_defer_s = max_defer_s
        self.saved: int | None = None  # the collector's own third threshold, while deferring
        self.until = float("inf")  # when ``check`` may run a due full pass
        self.forced = 0

    @property
    def deferring(self) -> bool:
        return self.saved is not None

    def busy(self, now: float) -> None:
        """Live streams play from ``now`` on: the collector starts no full pass by itself."""
        if self.saved is not None or self.max_defer_s <= 0:
            return
        t0, t1, t2 = gc.get_threshold()
        self.saved = t2
        gc.set_threshold(t0, t1, _OUT_OF_REACH)
        self.until = now + self.max_defer_s

    def check(self, now: float) -> bool:
        """Run the full pass that became due meanwhile once ``max_defer_s`` has gone by (True when it ran)."""
        if now < self.until or self.saved is None:
            return False
        self.until = now + self.max_defer_s
        if gc.get_count()[2] <= self.saved:
            return False  # not due: the collector would not have run one either
        gc.collect()
        self.forced += 1
        return True

    def idle(self) -> None:
        """No live stream plays any more: the collector's own threshold is back (a due pass runs when it would)."""
        if self.saved is None:
            return
        t0, t1, _ = gc.get_threshold()
        gc.set_threshold(t0, t1, self.saved)
        self.saved = None
        self.until = float("inf")
