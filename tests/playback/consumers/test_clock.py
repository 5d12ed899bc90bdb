"""The clock websocket on a real Daphne process: pings answered, bad frames refused, Origin checked."""

import asyncio
import json

import pytest
import websockets

pytestmark = [pytest.mark.integration]


def _ws(base: str) -> str:
    return base.replace("http://", "ws://") + "/ws/clock/"


async def _exchange(url: str, origin: str, frames: list[str]) -> list[dict]:
    async with websockets.connect(url, origin=origin) as ws:
        replies = [json.loads(await ws.recv())]  # hello
        for frame in frames:
            await ws.send(frame)
            replies.append(json.loads(await asyncio.wait_for(ws.recv(), 5)))
        return replies


def test_ping_is_answered_with_server_receive_and_send_times(daphne_server):
    ping = json.dumps({"type": "ping", "id": 7, "t0": 12.5})
    replies = asyncio.run(_exchange(_ws(daphne_server), "http://127.0.0.1", [ping]))
    hello, pong = replies
    assert hello["type"] == "hello" and hello["protocol"] == 1
    assert pong["type"] == "pong" and pong["id"] == 7 and pong["t0"] == 12.5
    assert pong["t1"] <= pong["t2"]


def test_malformed_frames_get_an_error_and_the_socket_survives(daphne_server):
    frames = ["{not json", json.dumps([1, 2]), json.dumps({"type": "dance"}), json.dumps({"type": "ping", "t0": "x"}),
              json.dumps({"type": "ping", "id": 1, "t0": 1.0})]
    replies = asyncio.run(_exchange(_ws(daphne_server), "http://localhost", frames))
    errors = [r for r in replies[1:] if r["type"] == "error"]
    assert [e["error"].split(":")[0] for e in errors] == [
        "malformed JSON", "message must be a JSON object", "unknown message type 'dance'; expected 'ping'", "ping.t0"]
    assert replies[-1]["type"] == "pong"


def test_a_foreign_origin_is_refused(daphne_server):
    async def attempt():
        async with websockets.connect(_ws(daphne_server), origin="http://evil.example") as ws:
            await ws.recv()

    with pytest.raises(websockets.exceptions.InvalidStatus) as exc:
        asyncio.run(attempt())
    assert exc.value.response.status_code == 403
