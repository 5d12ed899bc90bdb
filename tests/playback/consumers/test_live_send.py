"""How the playback consumer writes one live frame: the frame prepared when the socket bound, completed by its
send-time tail in one write; the text path when the tail does not fit its width or the short path is not offered;
the same message on the wire either way."""

from __future__ import annotations

import json

import pytest
from autobahn.websocket.protocol import WebSocketProtocol
from daphne.server import Server
from daphne.ws_protocol import WebSocketFactory
from twisted.internet.testing import StringTransport

from pacelab import ws_fast_send
from playback.consumers.playback import PlaybackConsumer, _bind
from playback.core import protocol
from playback.core.stream import Piece, Stream


class _DaphneServer:
    check_headers_type = staticmethod(Server.check_headers_type)

    def __init__(self) -> None:
        self.connections: dict = {}


def _writer():
    server = _DaphneServer()
    factory = WebSocketFactory(server, server="test")
    factory.setProtocolOptions(allowNullOrigin=True, maxMessagePayloadSize=1 << 20)
    proto = factory.buildProtocol(None)
    transport = StringTransport()
    proto.makeConnection(transport)
    proto.state = WebSocketProtocol.STATE_OPEN
    proto._perMessageCompress = None
    server.connections[proto] = {}
    return ws_fast_send.FrameWriter(proto), transport


def _messages(wire: bytes) -> list[dict]:
    out = []
    while wire:
        n, start = wire[1] & 0x7F, 2
        if n == 126:
            n, start = int.from_bytes(wire[2:4], "big"), 4
        out.append(json.loads(wire[start:start + n]))
        wire = wire[start + n:]
    return out


def _consumer(texts: list[str], prepared: bool):
    frames = [protocol.Frame(i, 25.0 * i, t, "content", 1) for i, t in enumerate(texts)]
    live = protocol.LiveFrames.of(frames)
    consumer = PlaybackConsumer()
    consumer.fast_send, transport = _writer()
    consumer.frames = live
    consumer.wire = None
    if prepared:
        consumer.wire = [ws_fast_send.prepared_frame(h.encode(), protocol.FRAME_TAIL_LEN) for h in live.heads]
        consumer.frames = protocol.LiveFrames(t_ms=live.t_ms, heads=[])
    return consumer, transport


@pytest.mark.parametrize("prepared", [True, False], ids=["prepared", "text"])
def test_a_live_frame_is_one_message_with_its_send_time_fields_whichever_path(prepared):
    texts = ["tok ", "你好 ", "y" * 300]
    consumer, transport = _consumer(texts, prepared)
    returned = [consumer._send_frame(i, 1.5 * i) for i in range(len(texts))]
    # the prepared path writes and returns nothing for the pacer to run; the text path an already-done awaitable
    assert returned == ([None] * 3 if prepared else [ws_fast_send.SENT] * 3)
    msgs = _messages(transport.value())
    assert [m["text"] for m in msgs] == texts and [m["late_ms"] for m in msgs] == [0.0, 1.5, 3.0]
    assert consumer.fast_send.fast == 3 and consumer.fast_send.fallback == 0


def test_a_tail_too_long_for_the_prepared_frame_takes_the_text_path_with_the_same_message():
    consumer, transport = _consumer(["tok "], prepared=True)
    assert consumer._send_frame(0, 3.6e7) is ws_fast_send.SENT  # ten hours late: the tail outgrows its width
    (msg,) = _messages(transport.value())
    assert msg["text"] == "tok " and msg["late_ms"] == 3.6e7 and msg["seq"] == 0


@pytest.mark.django_db
def test_binding_a_live_playback_prepares_its_frames_only_for_a_socket_with_the_short_path():
    from playback.services.delivery import playback_create

    stream = Stream((Piece("a", 0.0), Piece("b", 25.0)))
    token = playback_create(stream=stream, mode="live", config={}).token
    _, live, wire = _bind(token, None, None, prepare=True)
    assert live.t_ms == [0.0, 25.0] and live.heads == [] and len(wire) == 2
    _, plain, none = _bind(token, None, None, prepare=False)
    assert none is None
    assert [ws_fast_send.prepared_payload(w).decode() for w in wire] == plain.heads
