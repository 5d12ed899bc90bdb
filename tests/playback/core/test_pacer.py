"""The live pacer on a real event loop with a fake send function: absolute deadlines, no drift, clean stops."""

import asyncio
import time

import pytest

from playback.core import pacer


def _frames(n: int, interval_ms: float, start_ms: float = 0.0) -> list[float]:
    """The scheduled times of ``n`` frames (the pacer knows nothing else about them)."""
    return [start_ms + i * interval_ms for i in range(n)]


class Recorder:
    """A send function that notes when each frame arrived; optionally slow for some frames."""

    def __init__(self, slow: dict[int, float] | None = None, busy_s: float = 0.0):
        self.slow = slow or {}
        self.busy_s = busy_s
        self.arrivals: list[tuple[int, float]] = []

    async def __call__(self, seq: int, late_ms: float) -> None:
        now = asyncio.get_running_loop().time()
        self.arrivals.append((seq, now))
        if self.busy_s:
            time.sleep(self.busy_s)  # a send that costs CPU, as a real websocket write does
        if seq in self.slow:
            await asyncio.sleep(self.slow[seq])


async def test_a_slow_send_delays_only_the_frames_already_due():
    frames = _frames(16, 20.0)
    send = Recorder(slow={3: 0.1})
    result = await pacer.pace(frames, send)
    late = {r.seq: r.lateness_ms for r in result.records}
    assert result.reason == "complete" and result.sent == 16
    assert late[4] >= 80  # frame 4 (due at 80 ms) waited for frame 3's 100 ms send
    # once caught up, frames are back on their own deadlines: the 100 ms were not added to them
    assert max(late[i] for i in range(10, 16)) < 30


async def test_the_naive_pacer_adds_every_delay_to_all_later_frames():
    frames = _frames(16, 20.0)
    result = await pacer.pace(frames, Recorder(slow={3: 0.1}), pacer="naive")
    assert min(r.lateness_ms for r in result.records[10:]) >= 100


async def test_no_drift_over_500_frames_while_the_naive_pacer_drifts_by_every_send():
    frames = _frames(500, 2.0)
    absolute = await pacer.pace(frames, Recorder(busy_s=0.0002))
    naive = await pacer.pace(frames, Recorder(busy_s=0.0002), pacer="naive")
    late = absolute.lateness()
    assert absolute.sent == 500
    assert sum(late[-50:]) / 50 - sum(late[:50]) / 50 < 10  # no drift
    assert late[-1] < 30
    # the naive pacer sleeps the full interval after each 0.2 ms send: at least 499 * 0.2 ms behind at the end
    assert naive.lateness()[-1] >= 499 * 0.2


async def test_pacing_stops_when_the_socket_closes_and_when_a_send_fails():
    frames = _frames(50, 5.0)
    open_until = 10
    send = Recorder()
    result = await pacer.pace(frames, send, is_open=lambda: len(send.arrivals) < open_until)
    assert result.reason == "closed" and result.sent == open_until

    async def failing(seq, late_ms):
        if seq == 4:
            raise ConnectionError("socket gone")

    result = await pacer.pace(frames, failing)
    assert result.reason == "send failed" and result.sent == 4


async def test_a_cancelled_pacing_task_leaves_the_registry_and_keeps_what_it_sent():
    before = pacer.live_task_count()
    result = pacer.PaceResult()
    done = []

    async def on_done(r):
        done.append(r)

    task = pacer.start_pacing(_frames(100, 10.0), Recorder(), result=result, on_done=on_done)
    assert pacer.live_task_count() == before + 1
    loop = asyncio.get_running_loop()
    t0 = loop.time()
    await asyncio.sleep(0.055)
    await pacer.stop_pacing(task)
    elapsed_ms = (loop.time() - t0) * 1000
    assert task.cancelled()
    assert pacer.live_task_count() == before
    # what was due by the stop was sent (a busy machine may wake the test late), nothing after it, no completion
    assert 3 <= result.sent <= min(elapsed_ms / 10 + 2, 99) and done == []


async def test_a_finished_pacing_task_runs_its_completion_and_leaves_the_registry():
    done = []

    async def on_done(r):
        done.append(r.reason)

    task = pacer.start_pacing(_frames(3, 1.0), Recorder(), on_done=on_done)
    result = await task
    await asyncio.sleep(0)
    assert result.sent == 3 and done == ["complete"]
    assert task not in pacer._LIVE and pacer.live_task_count() == 0


async def test_an_unknown_pacer_is_refused():
    with pytest.raises(ValueError, match="pacer: 'fast'"):
        await pacer.pace(_frames(1, 1.0), Recorder(), pacer="fast")


async def test_the_result_keeps_times_as_flat_lists_of_floats_untracked_by_the_collector():
    import gc

    result = await pacer.pace(_frames(5, 1.0), Recorder())
    assert [r.seq for r in result.records] == [0, 1, 2, 3, 4]
    assert result.lateness() == [r.lateness_ms for r in result.records]
    # per frame the result holds only floats: nothing the garbage collector has to walk
    assert not any(gc.is_tracked(x) for x in result.scheduled_ms + result.sent_ms)


async def test_a_send_that_writes_at_once_and_returns_nothing_is_paced_like_any_other():
    arrivals = []

    def write(seq, late_ms):
        arrivals.append(seq)
        return None

    result = await pacer.pace(_frames(20, 2.0), write)
    assert result.reason == "complete" and result.sent == 20 and arrivals == list(range(20))
    assert min(result.lateness()) >= 0
