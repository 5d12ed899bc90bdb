"""Live pacing: send each frame at its absolute deadline on the event loop's monotonic clock.

Deadline *i* is ``t0 + t_ms_i / 1000``; the pacer sleeps until that instant, never for "the interval since the
previous frame", so a slow send or a late wake-up delays only the frames already due and later deadlines do not
move (no drift). Here each stream is a task of its own (``absolute``); the default for live playback is the
``shared`` pacer of ``playback.core.live_pacer``, one per process for every stream; ``absolute`` stays as the
baseline benchmarks/pacing.py compares it with. The ``naive`` pacer (``await asyncio.sleep(interval)``) exists
only as the baseline that drifts.

The pacer stops as soon as ``is_open()`` turns false or a send raises (a closed socket), and every pacing task
is kept in a registry until it finishes, so tests and the debug hook can assert that none is left behind.
No Django import here.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import NamedTuple

# ``send(seq, late_ms)`` sends one frame: it returns None when the frame was written at once (no awaitable to
# run: the shared pacer's cheapest case), or an awaitable that completes the send.
SendFn = Callable[[int, float], Awaitable[None] | None]
PACERS = ("shared", "absolute", "naive")  # the names a playback's ``config.pacer`` may take
TASK_PACERS = ("absolute", "naive")  # the pacers that run one task per stream (``pace`` below)
DEFAULT_PACER = "shared"

_LIVE: set[asyncio.Task] = set()


class SendRecord(NamedTuple):
    """When one frame was due and when its send started, in ms from the pacing start (monotonic)."""

    seq: int
    scheduled_ms: float
    sent_ms: float

    @property
    def lateness_ms(self) -> float:
        return self.sent_ms - self.scheduled_ms


@dataclass
class PaceResult:
    """What a pacing run did: ``reason`` is ``complete``, ``closed`` (socket gone) or ``send failed``.

    Times are kept as two flat lists of floats (untracked by the garbage collector, unlike one record object
    per frame), in send order: frame ``i`` was due at ``scheduled_ms[i]`` and sent at ``sent_ms[i]``.
    """

    reason: str = "complete"
    scheduled_ms: list[float] = field(default_factory=list)
    sent_ms: list[float] = field(default_factory=list)

    @property
    def sent(self) -> int:
        return len(self.sent_ms)

    @property
    def records(self) -> list[SendRecord]:
        return [SendRecord(i, d, s) for i, (d, s) in enumerate(zip(self.scheduled_ms, self.sent_ms, strict=True))]

    def lateness(self) -> list[float]:
        return [s - d for d, s in zip(self.scheduled_ms, self.sent_ms, strict=True)]


async def pace(
    t_ms: Sequence[float],
    send: SendFn,
    *,
    is_open: Callable[[], bool] = lambda: True,
    pacer: str = "absolute",
    result: PaceResult | None = None,
) -> PaceResult:
    """Send frame ``i`` through ``send(i, late_ms)`` at ``t_ms[i]`` ms after the start; returns what was sent
    and when.

    Pass ``result`` to observe progress while it runs (it is filled in place, also when the task is cancelled).
    """
    if pacer not in TASK_PACERS:
        raise ValueError(f"pacer: {pacer!r} is not one of {TASK_PACERS}")
    loop = asyncio.get_running_loop()
    result = result if result is not None else PaceResult()
    t0 = loop.time()
    previous_ms = 0.0
    for i, due_ms in enumerate(t_ms):
        if pacer == "absolute":
            delay = t0 + due_ms / 1000.0 - loop.time()
            if delay > 0:
                await asyncio.sleep(delay)
        else:
            await asyncio.sleep(max(0.0, due_ms - previous_ms) / 1000.0)
            previous_ms = due_ms
        if not is_open():
            result.reason = "closed"
            return result
        sent_ms = (loop.time() - t0) * 1000.0
        try:
            sending = send(i, sent_ms - due_ms)
            if sending is not None:
                await sending
        except Exception:  # noqa: BLE001 - any failed send means the socket is gone: stop pacing
            result.reason = "send failed"
            return result
        result.scheduled_ms.append(due_ms)
        result.sent_ms.append(sent_ms)
    result.reason = "complete"
    return result


def start_pacing(
    t_ms: Sequence[float],
    send: SendFn,
    *,
    is_open: Callable[[], bool] = lambda: True,
    pacer: str = "absolute",
    result: PaceResult | None = None,
    on_done: Callable[[PaceResult], Awaitable[None]] | None = None,
) -> asyncio.Task[PaceResult]:
    """Run ``pace`` (then ``on_done(result)``, unless cancelled) as a task registered among the live pacing
    tasks until it finishes or is cancelled."""

    async def run() -> PaceResult:
        outcome = await pace(t_ms, send, is_open=is_open, pacer=pacer, result=result)
        if on_done is not None:
            await on_done(outcome)
        return outcome

    task = asyncio.get_running_loop().create_task(run(), name="playback-pacer")
    _LIVE.add(task)
    task.add_done_callback(_LIVE.discard)
    return task


async def stop_pacing(task: asyncio.Task | None) -> None:
    """Cancel a pacing task and wait until it has really finished (it is then out of the registry)."""
    if task is None:
        return
    if not task.done():
        task.cancel()
    try:
        await task
    except asyncio.CancelledError:
        if not task.cancelled():  # the caller itself is being cancelled
            raise
    except Exception:  # noqa: BLE001 - the task's own failure is not the caller's
        pass
    _LIVE.discard(task)


def live_task_count() -> int:
    """Pacing tasks of this process that have not finished yet."""
    return sum(1 for t in _LIVE if not t.done())
