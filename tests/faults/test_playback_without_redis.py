"""Playback never depends on Redis (docs/faults.md): with the Redis a Daphne process uses stopped, a socket that was
open keeps answering and pacing, a stream under way plays to its end, and a new socket opens and plays.

The Redis here is a private ``redis-server`` on a free port, started and killed by the test: the machine's shared
Redis (6379) is never touched, so this test is not ``serial_services``.
"""

import json
import subprocess
import time

import pytest
import redis
from fault_client import Person, play_through
from procs import free_port, start_daphne, stop

from playback.core.stream import Piece, Stream
from playback.services.delivery import playback_create

pytestmark = pytest.mark.integration


@pytest.fixture
def private_redis(tmp_path):
    """A redis-server of this test's own; yields (url, process). Stopped at the end if the test did not."""
    port = free_port()
    proc = subprocess.Popen(["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "",
                             "--appendonly", "no", "--dir", str(tmp_path)],
                            stdout=open(tmp_path / "redis.log", "wb"), stderr=subprocess.STDOUT,  # noqa: SIM115
                            start_new_session=True)
    client = redis.Redis(port=port, socket_connect_timeout=1)
    for _ in range(100):
        try:
            if client.ping():
                break
        except redis.ConnectionError:
            time.sleep(0.1)
    else:
        proc.kill()
        pytest.fail("the private redis-server did not start")
    yield f"redis://127.0.0.1:{port}/0", proc
    stop(proc)


def _stream(n: int, interval_ms: float) -> Stream:
    return Stream(tuple(Piece(f"w{i} ", 50 + i * interval_ms) for i in range(n)))


def _pong(ws) -> dict:
    ws.send(json.dumps({"type": "ping", "id": 7, "t0": time.time() * 1000}))
    return json.loads(ws.recv(10))


def test_playback_sockets_work_while_redis_is_down(fault_env, live_study, private_redis, tmp_path):
    url, redis_proc = private_redis
    env = dict(fault_env, REDIS_URL=url, CELERY_BROKER_URL=url, CELERY_RESULT_BACKEND=url)
    port = free_port()
    daphne = start_daphne(port, env, tmp_path / "daphne.log")
    base = f"http://127.0.0.1:{port}"
    try:
        me = Person(base, live_study.slug, "no-redis")
        trial = me.until_trial()
        token = trial["trial"]["playbacks"][0]["token"]
        long_live = playback_create(stream=_stream(120, 40.0), mode="live")  # ~5 s of frames
        fresh = playback_create(stream=_stream(40, 20.0), mode="live")

        with me.ws() as idle, me.ws() as streaming:
            assert _pong(idle)["type"] == "pong"
            streaming.send(json.dumps({"type": "hello", "token": long_live.token}))
            assert json.loads(streaming.recv(10))["type"] == "ready"
            streaming.send(json.dumps({"type": "start"}))
            first = [json.loads(streaming.recv(10)) for _ in range(3)]
            assert [f["seq"] for f in first] == [0, 1, 2]

            redis_proc.kill()  # Redis is gone, without a goodbye
            redis_proc.wait(10)
            t_down = time.monotonic()

            # the stream under way plays to its end, every frame in order
            rest = []
            while True:
                msg = json.loads(streaming.recv(15))
                if msg["type"] == "end":
                    break
                rest.append(msg)
            assert [f["seq"] for f in first + rest] == list(range(120)) and msg["reason"] == "complete"
            time.sleep(max(0.0, 6 - (time.monotonic() - t_down)))  # past a channel-layer receive's retry

            # the socket that was idle all along still answers, binds the participant's trial and plays it
            assert _pong(idle)["type"] == "pong"
            frames = play_through(idle, token)
            assert [f["seq"] for f in frames] == list(range(len(frames))) and len(frames) > 5

        # a new socket opens and plays while Redis is still down
        with me.ws() as new:
            assert _pong(new)["type"] == "pong"
            assert len(play_through(new, fresh.token)) == 40
        print(f"\nprivate Redis down {time.monotonic() - t_down:.1f}s: {len(first + rest)} frames of the open stream, "
              f"{len(frames)} on the idle socket, 40 on a new socket")
    finally:
        stop(daphne)
