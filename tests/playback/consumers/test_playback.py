"""The playback websocket: prefetch and live delivery, paint batches stored once, clean task shutdown, and every
bad message refused with the socket still alive. In-process tests drive the consumer with Channels'
``WebsocketCommunicator``; integration tests run a real Daphne and real ``websockets`` clients."""

import asyncio
import json
import socket
import time

import pytest
import websockets
from channels.auth import AuthMiddlewareStack
from channels.db import database_sync_to_async
from channels.routing import URLRouter
from channels.testing import WebsocketCommunicator
from django.contrib.auth import get_user_model
from django.db import connections
from django.test import Client
from django.urls import path

from playback.consumers.playback import PlaybackConsumer
from playback.core import live_pacer
from playback.core.fidelity import percentile
from playback.core.stream import Piece, Stream
from playback.models.delivery import PaintReport, Playback
from playback.services.delivery import playback_create, playback_fidelity

ORIGIN = "http://127.0.0.1"


def _stream(n: int = 100, interval_ms: float = 25.0, ttft_ms: float = 200.0) -> Stream:
    """``n`` tokens at 1000 / interval_ms tokens per second after the first token time."""
    return Stream(tuple(Piece(f"t{i} ", ttft_ms + i * interval_ms) for i in range(n)))


def _entries(frames: list[dict], late_ms: float = 5.0) -> list[dict]:
    return [{"seq": f["seq"], "t_ms": f["t_ms"], "recv_ms": f["t_ms"] + 1, "paint_ms": f["t_ms"] + late_ms,
             "chars": len(f["text"]), "hidden": False} for f in frames]


# --- in process ------------------------------------------------------------------------------------

APP = AuthMiddlewareStack(URLRouter([path("ws/playback/", PlaybackConsumer.as_asgi())]))


@pytest.fixture
async def db_thread():
    """Close the connection ``database_sync_to_async`` opened in its worker thread, so the test database can go."""
    yield
    await database_sync_to_async(connections.close_all)()


async def _communicator() -> WebsocketCommunicator:
    comm = WebsocketCommunicator(APP, "/ws/playback/")
    connected, _ = await comm.connect()
    assert connected
    return comm


@pytest.mark.django_db(transaction=True)
async def test_closing_the_socket_mid_stream_ends_the_pacing_task_in_process(db_thread):
    playback = await database_sync_to_async(playback_create)(stream=_stream(200, 10.0, 0.0), mode="live")
    comm = await _communicator()
    await comm.send_json_to({"type": "hello", "token": playback.token})
    assert (await comm.receive_json_from())["type"] == "ready"
    await comm.send_json_to({"type": "start"})
    first = [await comm.receive_json_from() for _ in range(3)]
    assert [f["seq"] for f in first] == [0, 1, 2]
    assert live_pacer.live_count() == 1
    await comm.disconnect()
    assert live_pacer.live_count() == 0
    await database_sync_to_async(playback.refresh_from_db)()
    assert playback.end_reason == "disconnected" and 3 <= playback.pacing["sent"] < 200


@pytest.mark.django_db(transaction=True)
async def test_stop_ends_live_delivery_and_says_how_many_frames_were_sent(db_thread):
    playback = await database_sync_to_async(playback_create)(stream=_stream(200, 10.0, 0.0), mode="live")
    comm = await _communicator()
    await comm.send_json_to({"type": "hello", "token": playback.token})
    await comm.receive_json_from()
    await comm.send_json_to({"type": "start"})
    await comm.receive_json_from()
    await comm.send_json_to({"type": "stop"})
    msg = await comm.receive_json_from()
    while msg["type"] == "frame":
        msg = await comm.receive_json_from()
    assert msg["type"] == "end" and msg["reason"] == "stopped" and 1 <= msg["sent"] < 200
    assert live_pacer.live_count() == 0
    await comm.send_json_to({"type": "stop"})
    assert await comm.receive_json_from() == {"type": "error", "error": "stop: the trial has ended"}
    await comm.disconnect()
    await database_sync_to_async(playback.refresh_from_db)()
    assert playback.end_reason == "stopped"


@pytest.mark.django_db(transaction=True)
async def test_a_participant_playback_is_unknown_to_another_session(db_thread):
    playback = await database_sync_to_async(playback_create)(stream=_stream(3), session_key="someone-else")
    comm = await _communicator()
    await comm.send_json_to({"type": "hello", "token": playback.token})
    assert await comm.receive_json_from() == {"type": "error", "error": "hello: unknown playback"}
    await comm.disconnect()


# --- against a real Daphne -------------------------------------------------------------------------


@pytest.fixture
def server(service_env, request) -> str:
    """The real Daphne of ``daphne_server`` with the test hooks on (the ``debug`` live-task count)."""
    service_env["PACELAB_TEST_HOOKS"] = "1"
    return request.getfixturevalue("daphne_server")


def _ws(base: str) -> str:
    return base.replace("http://", "ws://") + "/ws/playback/"


class Socket:
    def __init__(self, ws):
        self.ws = ws

    async def send(self, **msg) -> None:
        await self.ws.send(json.dumps(msg))

    async def recv(self, timeout: float = 5.0) -> dict:
        return json.loads(await asyncio.wait_for(self.ws.recv(), timeout))

    async def ask(self, **msg) -> dict:
        await self.send(**msg)
        return await self.recv()


def _connect(base: str, origin: str = ORIGIN, **kw):
    return websockets.connect(_ws(base), origin=origin, **kw)


async def _live_task_count(base: str) -> int:
    async with _connect(base) as ws:
        return (await Socket(ws).ask(type="debug"))["live_tasks"]


@pytest.mark.integration
def test_prefetch_delivers_the_whole_schedule_and_paint_batches_are_stored_once(server):
    stream = _stream(100)
    playback = playback_create(stream=stream, config={"render": "per-token", "indicator": "dots"})

    async def run():
        async with _connect(server) as ws:
            s = Socket(ws)
            ready = await s.ask(type="hello", protocol=1, token=playback.token)
            schedule = await s.ask(type="start")
            end = await s.recv()
            ack1 = await s.ask(type="paint", batch=1, entries=_entries(schedule["frames"][:60]),
                               clock={"offset_ms": 2.5, "uncertainty_ms": 0.3, "rtt_ms": 0.6})
            again = await s.ask(type="paint", batch=1, entries=_entries(schedule["frames"][:60]))
        async with _connect(server) as ws:  # a reconnecting client retries the batch it has no ack for
            s = Socket(ws)
            await s.ask(type="hello", token=playback.token)
            retry = await s.ask(type="paint", batch=1, entries=_entries(schedule["frames"][:60]))
            ack2 = await s.ask(type="paint", batch=2, entries=_entries(schedule["frames"][60:]))
        return ready, schedule, end, ack1, again, retry, ack2

    ready, schedule, end, ack1, again, retry, ack2 = asyncio.run(run())
    assert ready["mode"] == "prefetch" and ready["frames"] == 100 and ready["config"]["indicator"] == "dots"
    assert schedule["type"] == "schedule"
    assert [f["seq"] for f in schedule["frames"]] == list(range(100))
    assert "".join(f["text"] for f in schedule["frames"]) == stream.text
    assert [f["t_ms"] for f in schedule["frames"]] == [p.t_ms for p in stream.pieces]
    assert end == {"type": "end", "reason": "complete", "frames": 100, "sent": 100}
    assert ack1 == {"type": "ack", "batch": 1, "stored": True, "entries": 60}
    assert again == {"type": "error", "error": "paint.batch: 1 is not greater than the last batch 1"}
    assert retry == {"type": "ack", "batch": 1, "stored": False, "entries": 60}
    assert ack2 == {"type": "ack", "batch": 2, "stored": True, "entries": 40}
    reports = list(PaintReport.objects.filter(playback=playback))
    assert [r.batch for r in reports] == [1, 2]
    assert reports[0].clock_offset_ms == 2.5 and reports[0].clock_uncertainty_ms == 0.3
    summary = playback_fidelity(playback=playback)
    assert summary.frames == 100 and summary.p50_ms == 5.0 and summary.flagged is False
    playback.refresh_from_db()
    assert playback.end_reason == "delivered" and playback.started_at is not None


@pytest.mark.integration
def test_a_schedule_over_daphnes_message_limit_arrives_in_parts_whole_and_in_order(server):
    """Daphne closes a socket (1011) rather than send a message over 1 MiB; a long (here Chinese) schedule goes
    in parts. Large messages also take Twisted's buffered path behind the eager writes (pacelab/eager_writes.py)."""
    stream = Stream(tuple(Piece(f"{i:06d} " + "长文本" * 20, i * 1.0) for i in range(20_000)))  # ~2.5 MB
    playback = playback_create(stream=stream)

    async def run():
        async with _connect(server, max_size=None) as ws:
            s = Socket(ws)
            await s.ask(type="hello", token=playback.token)
            parts = [await s.ask(type="start")]
            while parts[-1]["part"] < parts[-1]["parts"]:
                parts.append(await s.recv())
            end = await s.recv()
            pong = await s.ask(type="ping", t0=1.0, id="after")
        return parts, end, pong

    parts, end, pong = asyncio.run(run())
    assert len(parts) >= 4 and [p["part"] for p in parts] == list(range(1, len(parts) + 1))
    frames = [f for p in parts for f in p["frames"]]
    assert [f["seq"] for f in frames] == list(range(20_000))
    assert "".join(f["text"] for f in frames) == stream.text
    assert end["type"] == "end" and end["sent"] == 20_000 and pong["id"] == "after"


@pytest.mark.integration
@pytest.mark.parametrize("config", [{}, {"pacer": "absolute"}], ids=["shared-default", "absolute"])
def test_live_delivery_is_complete_ordered_and_on_schedule(server, config):
    stream = _stream(100, 25.0)  # 100 tokens at 40 tokens/s
    playback = playback_create(stream=stream, mode="live", config=config)

    async def run():
        async with _connect(server) as ws:
            s = Socket(ws)
            await s.ask(type="hello", token=playback.token)
            await s.send(type="start")
            return await _read_live(s)

    frames, arrivals, end = asyncio.run(run())
    assert end == {"type": "end", "reason": "complete", "frames": 100, "sent": 100}
    assert [f["seq"] for f in frames] == list(range(100))
    assert "".join(f["text"] for f in frames) == stream.text
    server_late = [f["late_ms"] for f in frames]
    client_late = _client_late(frames, arrivals)
    # Correctness bounds on a shared, loaded test machine (the precision targets live in benchmarks/pacing.py):
    # a pacer that accumulated sleeps would be late by hundreds of ms by the last of these 100 frames.
    assert percentile(server_late, 50) < 10  # the send times the server measured against its deadlines
    # p95, not p99: of 100 frames p99 is the one worst, and a single scheduling hiccup of a loaded machine is not
    # a pacing defect (seen: 100.6 ms once, with other test suites on the same 2 cores); drift is checked below
    assert percentile(server_late, 95) < 100
    assert percentile(client_late, 95) < 100  # arrivals also carry the client's own scheduling noise
    assert abs(percentile(client_late[-20:], 50) - percentile(client_late[:20], 50)) < 25  # no drift
    assert all(f["sent_ms"] > 1.6e12 for f in frames)
    playback.refresh_from_db()
    assert playback.end_reason == "complete" and playback.pacing["sent"] == 100


async def _read_live(s: Socket) -> tuple[list[dict], list[float], dict]:
    frames, arrivals = [], []
    while True:
        msg = await s.recv()
        if msg["type"] != "frame":
            return frames, arrivals, msg
        frames.append(msg)
        arrivals.append(time.monotonic() * 1000)


def _client_late(frames: list[dict], arrivals: list[float]) -> list[float]:
    return [(a - arrivals[0]) - (f["t_ms"] - frames[0]["t_ms"]) for a, f in zip(arrivals, frames, strict=True)]


@pytest.mark.integration
def test_a_stalled_client_does_not_delay_another_live_stream(server):
    """One client stops reading (a 4 KiB receive buffer, 64 KiB frames: 6.4 MB, more than the kernel's buffers
    hold, so the server has to keep the rest) while another stream plays: the other stream keeps its schedule,
    and the stalled client, once it reads again, gets every frame in order."""
    big = Stream(tuple(Piece("x" * 65536, i * 25.0) for i in range(100)))
    stalled_pb = playback_create(stream=big, mode="live")
    normal_pb = playback_create(stream=_stream(100, 25.0, 0.0), mode="live")
    host, port = server.split("//", 1)[1].split(":")

    async def run():
        sock = socket.socket()
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        sock.connect((host, int(port)))
        sock.setblocking(False)
        async with _connect(server, sock=sock, max_queue=2, max_size=None) as slow_ws, _connect(server) as ws:
            slow, normal = Socket(slow_ws), Socket(ws)
            await slow.ask(type="hello", token=stalled_pb.token)
            await normal.ask(type="hello", token=normal_pb.token)
            await slow.send(type="start")
            first = [await slow.recv() for _ in range(3)]
            await normal.send(type="start")  # ... and the stalled client reads nothing more meanwhile
            frames, arrivals, end = await _read_live(normal)
            still_pacing = await _live_task_count(server)
            rest, _, slow_end = await _read_live(slow)
            return first + rest, slow_end, frames, arrivals, end, still_pacing

    stalled, stalled_end, frames, arrivals, end, still_pacing = asyncio.run(run())
    # the other stream played to its end while the stalled client had read three frames ...
    assert end == {"type": "end", "reason": "complete", "frames": 100, "sent": 100}
    assert [f["seq"] for f in frames] == list(range(100))
    # ... on its schedule (the bounds of test_live_delivery_is_complete_ordered_and_on_schedule)
    assert percentile([f["late_ms"] for f in frames], 99) < 100
    client_late = _client_late(frames, arrivals)
    assert percentile(client_late, 95) < 100
    assert abs(percentile(client_late[-20:], 50) - percentile(client_late[:20], 50)) < 25
    assert still_pacing == 0  # the stalled stream's sends were all done (into the server's buffers) by then
    assert stalled_end == {"type": "end", "reason": "complete", "frames": 100, "sent": 100}
    assert [f["seq"] for f in stalled] == list(range(100)) and all(len(f["text"]) == 65536 for f in stalled)
    assert percentile([f["late_ms"] for f in stalled], 99) < 100  # its writes never waited for the client


@pytest.mark.integration
def test_forty_live_streams_started_together_each_get_every_frame_in_order_from_one_process(server):
    playbacks = [playback_create(stream=_stream(60, 25.0, 0.0), mode="live") for _ in range(40)]

    async def one(pb, go: asyncio.Event):
        async with _connect(server) as ws:
            s = Socket(ws)
            await s.ask(type="hello", token=pb.token)
            await go.wait()
            await s.send(type="start")
            return await _read_live(s)

    async def run():
        go = asyncio.Event()
        tasks = [asyncio.ensure_future(one(pb, go)) for pb in playbacks]
        await asyncio.sleep(1.0)
        go.set()
        return await asyncio.gather(*tasks)

    for frames, _arrivals, end in asyncio.run(run()):
        assert end == {"type": "end", "reason": "complete", "frames": 60, "sent": 60}
        assert [f["seq"] for f in frames] == list(range(60))
        assert min(f["late_ms"] for f in frames) >= 0  # no frame left before its deadline
    for pb in playbacks:
        pb.refresh_from_db()
        assert pb.end_reason == "complete" and pb.pacing["sent"] == 60


@pytest.mark.integration
def test_closing_the_socket_mid_stream_ends_the_pacing_task_on_daphne(server):
    playback = playback_create(stream=_stream(400, 25.0, 0.0), mode="live")

    async def run():
        async with _connect(server) as ws:
            s = Socket(ws)
            await s.ask(type="hello", token=playback.token)
            await s.send(type="start")
            first = [await s.recv() for _ in range(4)]
            during = await _live_task_count(server)
        await asyncio.sleep(0.3)
        return first, during, await _live_task_count(server)

    first, during, after = asyncio.run(run())
    assert [f["seq"] for f in first] == [0, 1, 2, 3]
    assert during == 1 and after == 0
    playback.refresh_from_db()
    assert playback.end_reason == "disconnected" and playback.pacing["sent"] < 400


@pytest.mark.integration
def test_bad_messages_get_errors_the_socket_survives_and_nothing_is_stored(server):
    owner = get_user_model().objects.create_user("owner", password="pw-owner-123")
    other = playback_create(stream=_stream(5), owner=owner)
    mine = playback_create(stream=_stream(5))
    entries = [{"seq": 0, "t_ms": 200.0, "recv_ms": 201.0, "paint_ms": 205.0, "chars": 3, "hidden": False}]
    frames = [
        "{not json",
        json.dumps({"type": "dance"}),
        json.dumps({"type": "paint", "batch": 1, "entries": entries}),  # before hello
        json.dumps({"type": "hello", "token": "forged-" + "x" * 36}),
        json.dumps({"type": "hello", "token": other.token}),  # someone else's playback
        json.dumps({"type": "paint", "batch": 1, "entries": entries}),  # still not bound
        json.dumps({"type": "hello", "token": mine.token}),
        json.dumps({"type": "stop"}),
        json.dumps({"type": "paint", "batch": "one", "entries": entries}),
        json.dumps({"type": "paint", "batch": 1, "entries": [{**entries[0], "paint_ms": "late"}]}),
        json.dumps({"type": "ping", "id": 9, "t0": 1.5}),
    ]

    async def run():
        async with _connect(server) as ws:
            s = Socket(ws)
            replies = []
            for frame in frames:
                await ws.send(frame)
                replies.append(await s.recv())
            return replies

    replies = asyncio.run(run())
    errors = [r["error"] for r in replies if r["type"] == "error"]
    assert [e.split(":")[0] for e in errors] == [
        "malformed JSON", "unknown message type 'dance'; expected one of hello, start, stop, paint, ping",
        "paint", "hello", "hello", "paint", "stop", "paint.batch", "paint.entries[0].paint_ms"]
    assert errors[3] == errors[4] == "hello: unknown playback"  # forged and foreign tokens look the same
    assert replies[6]["type"] == "ready"
    assert replies[-1]["type"] == "pong" and replies[-1]["id"] == 9
    assert PaintReport.objects.count() == 0
    assert Playback.objects.filter(started_at__isnull=False).count() == 0


@pytest.mark.integration
def test_the_logged_in_owner_drives_their_playback(server):
    owner = get_user_model().objects.create_user("owner", password="pw-owner-123")
    playback = playback_create(stream=_stream(5), owner=owner)
    client = Client()
    client.force_login(owner)
    cookie = f"sessionid={client.cookies['sessionid'].value}"

    async def run():
        async with _connect(server, additional_headers={"Cookie": cookie}) as ws:
            s = Socket(ws)
            ready = await s.ask(type="hello", token=playback.token)
            schedule = await s.ask(type="start")
            return ready, schedule

    ready, schedule = asyncio.run(run())
    assert ready["type"] == "ready" and len(schedule["frames"]) == 5


@pytest.mark.integration
def test_a_foreign_origin_is_refused_on_the_playback_route(server):
    async def attempt():
        async with _connect(server, origin="http://evil.example") as ws:
            await ws.recv()

    with pytest.raises(websockets.exceptions.InvalidStatus) as exc:
        asyncio.run(attempt())
    assert exc.value.response.status_code == 403
