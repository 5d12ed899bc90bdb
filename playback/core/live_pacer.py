"""One pacer per event loop for every live stream of the process (the ``shared`` pacer, the default).

The per-stream pacer (``playback.core.pacer``) gives each stream a task, a timer per frame and a task switch per
frame; at 500 streams of 40 tokens/s (20,000 frames/s) that overhead alone kept a Daphne process late by tens of
ms (issue 44). Here one ``DeadlineHeap`` holds each stream's next frame and one loop timer is armed for the
earliest deadline; when it fires, every frame due by then is sent, in deadline order, from that one callback.

Sends still go through each stream's own ``send`` (the consumer that owns the socket, in this process and on
this loop; never the channel layer). ``send`` is a coroutine function, but it is *driven* here rather than
awaited in a task: on Daphne (and Channels' test communicator) a websocket send completes without suspending, so
the callback runs it to the end with no task and no switch. A send that does suspend (a transport that applies
back-pressure) is finished in a task of its own: that stream's later frames wait for it, the others do not.

Deadlines are absolute (``t0 + t_ms[i] / 1000`` on the loop's monotonic clock, ``playback.core.deadlines``), so a
late wake-up or a slow send delays only the frames already due and nothing drifts. A stream stops as soon as
``is_open()`` turns false or a send raises, and ``stop()`` cancels it at once (its in-flight send and its
``on_done`` included). No Django import here.
"""

from __future__ import annotations

import asyncio
import os
import weakref
from collections.abc import Awaitable, Callable, Coroutine, Generator, Sequence
from typing import Any

from playback.core import pacer as task_pacer
from playback.core.deadlines import DeadlineHeap
from playback.core.gc_deferral import FullCollectionDeferral
from playback.core.pacer import PaceResult, SendFn

DoneFn = Callable[[PaceResult], Awaitable[None]]

# How long the collector's full passes wait while live streams play (playback.core.gc_deferral; 0: not at all).
GC_DEFER_ENV = "PACELAB_LIVE_GC_DEFER_S"
DEFAULT_GC_DEFER_S = 60.0


def gc_defer_s() -> float:
    """``PACELAB_LIVE_GC_DEFER_S`` (seconds, default 60; 0 turns the deferral off)."""
    raw = os.environ.get(GC_DEFER_ENV, "")
    try:
        return float(raw) if raw.strip() else DEFAULT_GC_DEFER_S
    except ValueError:
        raise ValueError(f"{GC_DEFER_ENV}: {raw!r} is not a number of seconds") from None


class LiveStream:
    """One stream in the shared pacer: what it sends through and what it sent (``result``, filled in place)."""

    __slots__ = ("t0", "last", "send", "is_open", "result", "on_done", "in_flight", "finishing", "finished",
                 "gone", "__weakref__")

    def __init__(self, t0: float, frames: int, send: SendFn, is_open: Callable[[], bool], result: PaceResult,
                 on_done: DoneFn | None) -> None:
        self.t0, self.last, self.send, self.is_open, self.result, self.on_done = (
            t0, frames - 1, send, is_open, result, on_done)
        self.in_flight: asyncio.Task | None = None  # a send that suspended, finishing in its own task
        self.finishing: asyncio.Task | None = None  # on_done, once the stream ended by itself
        self.finished = False  # no frame of it is sent any more
        self.gone: asyncio.Future[PaceResult] = asyncio.get_running_loop().create_future()  # nothing of it runs


class _Resume:
    """Await the rest of a coroutine that was already run up to its first suspension (``pending``)."""

    __slots__ = ("coro", "pending")

    def __init__(self, coro: Coroutine[Any, Any, Any], pending: Any) -> None:
        self.coro, self.pending = coro, pending

    def __await__(self) -> Generator[Any, Any, Any]:
        coro, pending = self.coro, self.pending
        while True:
            try:
                value = yield pending
            except GeneratorExit:
                coro.close()
                raise
            except BaseException as exc:  # noqa: BLE001 - cancellation and the rest go into the send itself
                try:
                    pending = coro.throw(exc)
                except StopIteration as stop:
                    return stop.value
            else:
                try:
                    pending = coro.send(value)
                except StopIteration as stop:
                    return stop.value


async def _finish_send(coro: Coroutine[Any, Any, Any], pending: Any) -> Any:
    return await _Resume(coro, pending)


class SharedPacer:
    """Every live stream of one event loop, with one timer armed for the earliest deadline."""

    def __init__(self, loop: asyncio.AbstractEventLoop, gc_defer_s: float = 0.0) -> None:
        self._loop = loop
        # the collector's full passes wait while streams play (at most ``gc_defer_s`` at a time)
        self.gc = FullCollectionDeferral(gc_defer_s)
        self._clock = loop.time
        self._heap = DeadlineHeap()
        self._timer: asyncio.TimerHandle | None = None
        self._timer_at = 0.0
        self._streams: set[LiveStream] = set()
        self.wakes = 0  # how many times the timer fired (frames per wake = frames sent / wakes)

    def __len__(self) -> int:
        """Streams that have not finished (their ``on_done`` included)."""
        return len(self._streams)

    def start(self, t_ms: Sequence[float], send: SendFn, *, is_open: Callable[[], bool] = lambda: True,
              result: PaceResult | None = None, on_done: DoneFn | None = None) -> LiveStream:
        """Pace frame ``i`` through ``send(i, late_ms)`` at ``t_ms[i]`` ms from now; ``on_done(result)`` once the
        stream ends by itself (complete, closed or send failed), not when it is stopped."""
        stream = LiveStream(self._loop.time(), len(t_ms), send, is_open,
                            result if result is not None else PaceResult(), on_done)
        if not self._streams:
            self.gc.busy(stream.t0)
        self._streams.add(stream)
        if self._heap.add(stream, t_ms, stream.t0):
            self._arm()
        else:
            self._end(stream, "complete")
        return stream

    async def stop(self, stream: LiveStream) -> None:
        """Stop pacing ``stream`` now and wait until its in-flight send and its ``on_done`` have ended."""
        self._heap.remove(stream)
        stream.finished = True
        for task in (stream.in_flight, stream.finishing):
            if task is not None:
                await task_pacer.stop_pacing(task)
        self._forget(stream)

    @staticmethod
    async def wait(stream: LiveStream) -> PaceResult:
        """The stream's result once it ended by itself and its ``on_done`` ran, or it was stopped."""
        return await asyncio.shield(stream.gone)

    def _forget(self, stream: LiveStream) -> None:
        self._streams.discard(stream)
        if not self._streams:
            self.gc.idle()
        if not stream.gone.done():
            stream.gone.set_result(stream.result)

    # --- the timer ---------------------------------------------------------------------------------------

    def _arm(self) -> None:
        deadline = self._heap.next_deadline()
        if deadline is None:
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None
            return
        if self._timer is not None:
            if self._timer_at <= deadline:
                return  # it fires first and re-arms then
            self._timer.cancel()
        self._timer_at = deadline
        self._timer = self._loop.call_at(deadline, self._tick)

    def _tick(self) -> None:
        """Send every frame due by now, in deadline order; frames falling due meanwhile go on the next turn, after
        the loop has polled its sockets (a stop or a ping is never starved)."""
        self._timer = None
        self.wakes += 1
        try:
            now = self._clock()
            self._heap.run_due(now, self._send)
            if now >= self.gc.until:  # a full pass deferred for long enough runs now, after this wake's frames
                self.gc.check(now)
        finally:
            self._arm()

    # --- one frame ---------------------------------------------------------------------------------------

    def _send(self, stream: LiveStream, seq: int, due_ms: float) -> bool | None:
        """Send one frame through its stream's own ``send``: True once sent, None when the send suspended (it
        finishes in a task), False when the stream ended here."""
        if not stream.is_open():
            self._end(stream, "closed")
            return False
        sent_ms = (self._clock() - stream.t0) * 1000.0
        try:
            sending = stream.send(seq, sent_ms - due_ms)
            if sending is not None:  # an awaitable: run it up to its end or its first suspension
                pending = sending.send(None)  # type: ignore[attr-defined]
        except StopIteration:
            sending = None
        except Exception:  # noqa: BLE001 - any failed send means the socket is gone: stop pacing it
            self._end(stream, "send failed")
            return False
        if sending is None:  # written (at once, or run to its end above)
            result = stream.result
            result.scheduled_ms.append(due_ms)
            result.sent_ms.append(sent_ms)
            if seq == stream.last:
                self._end(stream, "complete")
            return True
        task = self._loop.create_task(_finish_send(sending, pending), name="playback-pacer-send")  # type: ignore[arg-type]
        stream.in_flight = task
        task.add_done_callback(lambda t: self._sent_later(stream, t, seq, due_ms, sent_ms))
        return None

    def _sent_later(self, stream: LiveStream, task: asyncio.Task, seq: int, due_ms: float, sent_ms: float) -> None:
        stream.in_flight = None
        if stream.finished or task.cancelled():
            return
        if task.exception() is not None:
            self._end(stream, "send failed")
            return
        stream.result.scheduled_ms.append(due_ms)
        stream.result.sent_ms.append(sent_ms)
        if seq == stream.last:
            self._end(stream, "complete")
            return
        self._heap.advance(stream)
        self._arm()

    def _end(self, stream: LiveStream, reason: str) -> None:
        self._heap.remove(stream)
        stream.result.reason = reason
        stream.finished = True
        if stream.on_done is None:
            self._forget(stream)
            return
        stream.finishing = self._loop.create_task(stream.on_done(stream.result), name="playback-pacer-done")
        stream.finishing.add_done_callback(lambda _t: self._forget(stream))


_PACERS: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, SharedPacer] = weakref.WeakKeyDictionary()


def shared_pacer() -> SharedPacer:
    """The shared pacer of the running event loop (created on first use)."""
    loop = asyncio.get_running_loop()
    found = _PACERS.get(loop)
    if found is None:
        found = _PACERS[loop] = SharedPacer(loop, gc_defer_s())
    return found


Handle = LiveStream | asyncio.Task


def start(t_ms: Sequence[float], send: SendFn, *, is_open: Callable[[], bool] = lambda: True,
          pacer: str = task_pacer.DEFAULT_PACER, result: PaceResult | None = None,
          on_done: DoneFn | None = None) -> Handle:
    """Pace one live stream with the named pacer (``shared``, or a per-stream task: ``absolute``, ``naive``)."""
    if pacer not in task_pacer.PACERS:
        raise ValueError(f"pacer: {pacer!r} is not one of {task_pacer.PACERS}")
    if pacer == "shared":
        return shared_pacer().start(t_ms, send, is_open=is_open, result=result, on_done=on_done)
    return task_pacer.start_pacing(t_ms, send, is_open=is_open, pacer=pacer, result=result, on_done=on_done)


async def stop(handle: Handle | None) -> None:
    """Stop a live stream started by ``start`` and wait until nothing of it runs any more."""
    if isinstance(handle, LiveStream):
        await shared_pacer().stop(handle)
    else:
        await task_pacer.stop_pacing(handle)


def live_count() -> int:
    """Live streams of this process still pacing (or finishing) on the running loop, whichever pacer."""
    try:
        shared = len(_PACERS.get(asyncio.get_running_loop()) or ())
    except RuntimeError:
        shared = 0
    return task_pacer.live_task_count() + shared
