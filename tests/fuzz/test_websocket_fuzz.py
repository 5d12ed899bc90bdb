"""Fuzzing the playback websocket on a real Daphne: random and mutated message sequences. The server never fails
(no 1011 close, every reply is a well-formed protocol message), the socket stays usable (a ping still gets its
pong) or closes cleanly, every stored paint batch is a valid one, and another participant's playback is never
touched. Foreign origins are refused at the handshake and the refusal is in the server's log."""

import json
import math

import pytest
from django.db.models import Q
from fuzzing import count, fuzz_settings, json_values, mutated
from hypothesis import given
from hypothesis import strategies as st
from websockets.exceptions import ConnectionClosed, InvalidStatus
from websockets.sync.client import connect

from playback.core import protocol
from playback.core.stream import Piece, Stream
from playback.models.delivery import PaintReport, Playback
from playback.services.delivery import playback_create

pytestmark = pytest.mark.integration
REPLY_TYPES = {"ready", "schedule", "frame", "end", "pong", "ack", "error"}
STREAM = Stream(tuple(Piece(c, 30.0 * i) for i, c in enumerate("fuzzing!", 1)))


def _valid_messages(token: str) -> list[dict]:
    entry = {"seq": 0, "t_ms": 30.0, "recv_ms": 31.0, "paint_ms": 40.0, "chars": 1, "hidden": False,
             "sent_ms": 1.7e12, "frame_ms": 16.7, "dropped": 0}
    return [{"type": "hello", "token": token, "protocol": 1}, {"type": "start"}, {"type": "stop"},
            {"type": "ping", "t0": 12.5, "id": 1},
            {"type": "paint", "batch": 1, "entries": [entry, entry | {"seq": 1}],
             "clock": {"offset_ms": 3.0, "uncertainty_ms": 1.0, "rtt_ms": 2.0}}]


@st.composite
def sequences(draw, token: str, foreign: str):
    valid = _valid_messages(token)
    out: list[str | bytes] = []
    if draw(st.booleans()):
        out.append(json.dumps(valid[0]))  # bound first, so the later messages reach start, stop and paint
    for _ in range(draw(st.integers(1, 6))):
        how = draw(st.sampled_from(["valid", "mutated", "mutated", "random", "text", "binary", "foreign"]))
        count(f"ws:{how}")
        if how == "valid":
            out.append(json.dumps(draw(st.sampled_from(valid))))
        elif how == "mutated":
            out.append(json.dumps(draw(mutated(draw(st.sampled_from(valid))))))
        elif how == "random":
            out.append(json.dumps(draw(json_values)))
        elif how == "text":
            out.append(draw(st.text(max_size=300)))
        elif how == "binary":
            out.append(draw(st.binary(min_size=1, max_size=100)))
        else:
            out.append(json.dumps({"type": "hello", "token": foreign}))
    return out


def _reply_ok(msg: dict) -> None:
    assert isinstance(msg, dict) and msg.get("type") in REPLY_TYPES, msg
    if msg["type"] == "error":
        assert isinstance(msg["error"], str) and msg["error"]


@pytest.fixture
def server(service_env, request) -> str:
    service_env["CONN_MAX_AGE"] = "0"
    return request.getfixturevalue("daphne_server")


def test_random_and_mutated_messages_never_break_the_server_or_touch_another_playback(server, tmp_path,
                                                                                       transactional_db):
    url = server.replace("http://", "ws://") + "/ws/playback/"
    other = playback_create(stream=STREAM, mode="live")  # another participant's, never sent to anyone
    closes: dict[int, int] = {}

    @fuzz_settings()
    @given(data=st.data())
    def prop(data):
        mode = data.draw(st.sampled_from(["prefetch", "live"]))
        mine = playback_create(stream=STREAM, mode=mode)
        # one character off another participant's token (never the token itself: it may start with "x")
        seq = data.draw(sequences(mine.token, ("y" if other.token.startswith("x") else "x") + other.token[1:]))
        count("ws:example")
        with connect(url, origin=server, open_timeout=20, max_size=None) as ws:
            try:
                for message in seq:
                    ws.send(message)
                # drain what the server sent, then the socket must still answer a ping
                ws.send(json.dumps({"type": "ping", "t0": 1.0, "id": "probe"}))
                while True:
                    msg = json.loads(ws.recv(20))
                    _reply_ok(msg)
                    if msg["type"] == "pong" and msg["id"] == "probe":
                        break
            except ConnectionClosed as exc:
                code = exc.rcvd.code if exc.rcvd else None
                closes[code] = closes.get(code, 0) + 1
                assert code in (1000, 1009), f"socket closed with {code}"  # clean close or message too big
        for report in PaintReport.objects.filter(playback=mine):
            parsed = protocol.parse(json.dumps({"type": "paint", "batch": report.batch, "entries": report.entries}))
            assert [e.to_obj() for e in parsed.entries] == report.entries
            assert all(math.isfinite(e["paint_ms"]) for e in report.entries)

    prop()
    other.refresh_from_db()
    assert (other.started_at, other.ended_at, other.end_reason) == (None, None, "")
    assert not PaintReport.objects.filter(playback=other).exists()
    assert not PaintReport.objects.filter(~Q(playback__mode__in=["prefetch", "live"])).exists()
    assert Playback.objects.count() > 1
    print(f"\nwebsocket fuzz: closes {closes or 'none'}")


def test_foreign_origins_are_refused_at_the_handshake_and_logged(server, tmp_path, transactional_db):
    url = server.replace("http://", "ws://") + "/ws/playback/"
    refused = []
    for origin in ("http://evil.example", "null", "http://127.0.0.1.evil.example", "https://localhost.evil"):
        count("ws:wrong_origin")
        with pytest.raises(InvalidStatus) as exc:
            with connect(url, origin=origin, open_timeout=10):
                pass
        refused.append(exc.value.response.status_code)
    assert refused == [403] * 4
    log = (tmp_path / "daphne.log").read_text()
    assert log.count("WSREJECT") >= 4, log[-2000:]
