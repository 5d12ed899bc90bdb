"""The shared pacer on a real event loop with fake send functions: many streams from one timer, each frame at
its absolute deadline, a send that waits delays only its own stream, and stops leave nothing running."""

import asyncio
import time

import pytest

from playback.core import live_pacer
from playback.core.pacer import PaceResult


def _frames(n: int, interval_ms: float, start_ms: float = 0.0) -> list[float]:
    return [start_ms + i * interval_ms for i in range(n)]


class Recorder:
    """A send function noting (seq, loop time) per frame; ``wait`` maps a seq to seconds its send suspends for,
    ``busy_s`` burns CPU in every send as a real websocket write does, ``fail_at`` raises at that seq."""

    def __init__(self, wait: dict[int, float] | None = None, busy_s: float = 0.0, fail_at: int | None = None):
        self.wait, self.busy_s, self.fail_at = wait or {}, busy_s, fail_at
        self.arrivals: list[tuple[int, float]] = []
        self.tasks: set = set()

    async def __call__(self, seq: int, late_ms: float) -> None:
        self.arrivals.append((seq, asyncio.get_running_loop().time()))
        self.tasks.add(asyncio.current_task())
        if seq == self.fail_at:
            raise ConnectionError("socket gone")
        if self.busy_s:
            time.sleep(self.busy_s)
        if seq in self.wait:
            await asyncio.sleep(self.wait[seq])

    @property
    def seqs(self) -> list[int]:
        return [s for s, _ in self.arrivals]


class DoneReasons:
    """An ``on_done`` callback noting the reason of each result it is called with, in order."""

    def __init__(self):
        self.reasons: list[str] = []

    async def __call__(self, result: PaceResult) -> None:
        self.reasons.append(result.reason)


async def test_many_streams_are_paced_by_one_timer_without_a_task_per_frame():
    shared = live_pacer.shared_pacer()
    wakes0 = shared.wakes
    senders = [Recorder() for _ in range(200)]
    streams = [shared.start(_frames(20, 10.0), s) for s in senders]
    assert live_pacer.live_count() == 200
    results = [await shared.wait(s) for s in streams]
    assert all(r.reason == "complete" and r.sent == 20 for r in results)
    assert all(s.seqs == list(range(20)) for s in senders)
    # every send ran inside the timer's callback, not in a task of its own (no task switch per frame)
    assert all(s.tasks == {None} for s in senders)
    # 200 streams started within a few ms: frames due together come out on one wake, so there are far fewer wakes
    # than frames (about 20 on an idle machine; a busy one spreads the starts, 553 was seen with two test workers)
    assert shared.wakes - wakes0 < 200 * 20 / 2
    assert live_pacer.live_count() == 0


async def test_each_frame_waits_for_its_absolute_deadline_and_nothing_drifts():
    send = Recorder(busy_s=0.0002)
    shared = live_pacer.shared_pacer()
    stream = shared.start(_frames(500, 2.0), send)
    result = await shared.wait(stream)
    late = result.lateness()
    assert result.sent == 500 and min(late) >= 0  # never early
    assert sum(late[-50:]) / 50 - sum(late[:50]) / 50 < 10  # no drift
    t0 = stream.t0
    assert all(t >= t0 + 2.0 * seq / 1000 for seq, t in send.arrivals)


async def test_a_send_that_waits_delays_only_its_own_stream_and_its_frames_stay_in_order():
    shared = live_pacer.shared_pacer()
    slow, fast = Recorder(wait={3: 0.3}), Recorder()
    s_slow = shared.start(_frames(32, 20.0), slow)
    s_fast = shared.start(_frames(32, 20.0), fast)
    r_slow, r_fast = await shared.wait(s_slow), await shared.wait(s_fast)
    assert slow.seqs == list(range(32)) and fast.seqs == list(range(32))
    assert r_slow.reason == r_fast.reason == "complete"
    # while frame 3's send waited (300 ms from 60 ms on), the other stream's frames went out on their own
    # deadlines (due 80 ... 300 ms), and this stream sent nothing out of order
    at = dict(slow.arrivals)
    assert all(at[3] < t < at[4] for seq, t in fast.arrivals if 4 <= seq <= 15)
    late_slow = r_slow.lateness()
    assert late_slow[4] >= 240  # frame 4 (due at 80 ms) waited for frame 3's send
    # the stall was not added to later deadlines: the last frames are on time again (they would be >= 280 ms
    # late otherwise); a bound that holds on a loaded machine
    assert max(late_slow[-4:]) < 150


async def test_a_closed_socket_or_a_failed_send_ends_only_that_stream_and_runs_on_done():
    shared = live_pacer.shared_pacer()
    done = DoneReasons()
    closes = Recorder()
    closed = shared.start(_frames(50, 5.0), closes, is_open=lambda: len(closes.arrivals) < 10, on_done=done)
    failing = shared.start(_frames(50, 5.0), Recorder(fail_at=4), on_done=done)
    fine = shared.start(_frames(50, 5.0), Recorder(), on_done=done)
    assert (await shared.wait(closed)).sent == 10 and closed.result.reason == "closed"
    assert (await shared.wait(failing)).sent == 4 and failing.result.reason == "send failed"
    assert (await shared.wait(fine)).sent == 50
    assert sorted(done.reasons) == ["closed", "complete", "send failed"]


async def test_stopping_a_stream_takes_effect_at_once_and_cancels_its_waiting_send_and_on_done():
    shared = live_pacer.shared_pacer()
    done = DoneReasons()
    result = PaceResult()
    send = Recorder()
    stream = live_pacer.start(_frames(100, 10.0), send, result=result, on_done=done)
    other = shared.start(_frames(30, 10.0), Recorder())
    await asyncio.sleep(0.055)
    await live_pacer.stop(stream)
    sent = result.sent
    assert 1 <= sent < 100  # stopped mid-stream (about 6 frames in, on a quiet machine)
    await asyncio.sleep(0.05)
    assert result.sent == sent and done.reasons == []  # nothing sent after the stop, no completion
    assert (await shared.wait(other)).sent == 30  # the other stream went on
    # a send suspended mid-flight is cancelled with the stream
    waiting = Recorder(wait={0: 10.0})
    stuck = shared.start([0.0, 1.0], waiting)
    await asyncio.sleep(0.02)
    assert stuck.in_flight is not None
    await live_pacer.stop(stuck)
    assert stuck.in_flight is None or stuck.in_flight.cancelled()
    assert stuck.result.sent == 0 and live_pacer.live_count() == 0


async def test_stopping_during_on_done_cancels_it_and_an_empty_stream_completes_at_once():
    shared = live_pacer.shared_pacer()
    started = asyncio.Event()

    async def slow_done(result):
        started.set()
        await asyncio.sleep(10)

    stream = shared.start([0.0], Recorder(), on_done=slow_done)
    await started.wait()
    assert live_pacer.live_count() == 1
    await live_pacer.stop(stream)
    assert stream.finishing.cancelled() and live_pacer.live_count() == 0
    empty = shared.start([], Recorder())
    assert (await shared.wait(empty)).reason == "complete" and empty.result.sent == 0


async def test_the_named_pacers_dispatch_and_an_unknown_one_is_refused():
    handle = live_pacer.start(_frames(3, 1.0), Recorder(), pacer="absolute")
    assert isinstance(handle, asyncio.Task) and (await handle).sent == 3
    assert isinstance(live_pacer.start([], Recorder()), live_pacer.LiveStream)  # shared is the default
    with pytest.raises(ValueError, match="pacer: 'fast'"):
        live_pacer.start([0.0], Recorder(), pacer="fast")


class Writer:
    """A send that writes at once and returns nothing (a socket's short write path): no awaitable per frame.
    From ``wait_at`` on it returns an awaitable that suspends for ``wait_s`` instead, once."""

    def __init__(self, wait_at: int | None = None, wait_s: float = 0.0):
        self.wait_at, self.wait_s = wait_at, wait_s
        self.arrivals: list[tuple[int, float]] = []

    def __call__(self, seq: int, late_ms: float):
        self.arrivals.append((seq, asyncio.get_running_loop().time()))
        if seq == self.wait_at:
            return asyncio.sleep(self.wait_s)
        return None


async def test_a_send_that_writes_at_once_and_returns_nothing_is_recorded_on_its_deadline():
    shared = live_pacer.shared_pacer()
    writers = [Writer() for _ in range(50)]
    streams = [shared.start(_frames(40, 5.0), w) for w in writers]
    results = [await shared.wait(s) for s in streams]
    assert all(r.reason == "complete" and r.sent == 40 for r in results)
    assert all([seq for seq, _ in w.arrivals] == list(range(40)) for w in writers)
    for stream, w in zip(streams, writers, strict=True):
        assert all(t >= stream.t0 + 5.0 * seq / 1000 for seq, t in w.arrivals)  # never before its deadline
        assert min(stream.result.lateness()) >= 0
    # the same stream may still hand back an awaitable for one frame: that one waits, the rest stay in order
    mixed = Writer(wait_at=2, wait_s=0.1)
    stream = shared.start(_frames(10, 10.0), mixed)
    result = await shared.wait(stream)
    assert result.sent == 10 and [seq for seq, _ in mixed.arrivals] == list(range(10))
    assert result.lateness()[3] >= 70  # frame 3 (due at 30 ms) waited for frame 2's 100 ms send
    assert live_pacer.live_count() == 0
