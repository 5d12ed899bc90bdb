"""The short websocket write path under Daphne (pacelab/ws_fast_send.py): it writes exactly the bytes Autobahn
would, it steps aside whenever the connection needs Autobahn's own path, and a real Daphne offers it and takes it
for live frames (these tests fail if the Daphne/Autobahn internals it relies on change)."""

from __future__ import annotations

import asyncio
import base64
import functools
import json
import os
import socket
import struct

import pytest
from autobahn.websocket.protocol import WebSocketProtocol
from daphne.server import Server
from daphne_ws import open_protocol

from pacelab import ws_fast_send
from pacelab.ws_fast_send import SENT, FastSendMiddleware, FrameWriter


def _via_asgi(text: str) -> bytes:
    """The bytes Daphne's ASGI path writes for one ``websocket.send`` of ``text``."""
    proto, transport, server = open_protocol()
    coro = Server.handle_reply(server, proto, {"type": "websocket.send", "text": text})
    with pytest.raises(StopIteration):
        coro.send(None)
    return transport.value()


TEXTS = ["x", '{"seq":0,"text":"你好 👋"}', "a" * 125, "b" * 126, "c" * 65535, "d" * 65536, "é" * 40000]


@pytest.mark.parametrize("text", TEXTS, ids=lambda t: f"{len(t.encode())}B")
def test_the_fast_path_writes_exactly_the_bytes_of_daphnes_asgi_path(text):
    proto, transport, _ = open_protocol()
    writer = FrameWriter(proto)
    assert writer.send_text(text) is SENT
    assert transport.value() == _via_asgi(text)
    assert (writer.fast, writer.fallback) == (1, 0)


def test_sent_is_an_awaitable_that_is_already_done():
    with pytest.raises(StopIteration):
        SENT.send(None)  # what the shared pacer does with a send's result: done at once

    async def awaited():
        await SENT  # what a per-stream pacer task does
        return "after"

    assert asyncio.run(awaited()) == "after"


TAIL = b',"late_ms":1.250     }'  # a fixed-width send-time tail, as live frames have


@pytest.mark.parametrize("text", TEXTS, ids=lambda t: f"{len(t.encode())}B")
def test_a_prepared_frame_completed_by_its_tail_is_exactly_the_asgi_paths_bytes(text):
    head = text.encode()
    frame = ws_fast_send.prepared_frame(head, len(TAIL))
    assert ws_fast_send.prepared_payload(frame) == head
    proto, transport, _ = open_protocol()
    writer = FrameWriter(proto)
    assert writer.send_prepared(frame, TAIL) is True
    assert transport.value() == _via_asgi(text + TAIL.decode())
    assert (writer.fast, writer.fallback) == (1, 0)


def test_a_prepared_frame_is_refused_where_the_text_path_would_step_aside_and_nothing_is_written():
    frame = ws_fast_send.prepared_frame(b"x" * 60, len(TAIL))
    cases = []
    for state in (WebSocketProtocol.STATE_CONNECTING, WebSocketProtocol.STATE_CLOSING):
        proto, _, _ = open_protocol()
        proto.state = state
        cases.append(proto)
    proto, _, _ = open_protocol(maskServerFrames=True)
    cases.append(proto)
    proto, _, _ = open_protocol()
    proto.send_queue.append((b"chopped", True))
    cases.append(proto)
    proto, _, _ = open_protocol(autoFragmentSize=50)
    cases.append(proto)
    for proto in cases:
        writer = FrameWriter(proto)
        assert writer.send_prepared(frame, TAIL) is False
        assert proto.transport.value() == b""
        assert (writer.fast, writer.fallback) == (0, 0)  # the caller's text send counts the fallback
    # a socket that closes after its first prepared frame: the next one is refused (the state is checked each time)
    proto, transport, _ = open_protocol()
    writer = FrameWriter(proto)
    assert writer.send_prepared(frame, TAIL)
    proto.state = WebSocketProtocol.STATE_CLOSING
    assert not writer.send_prepared(frame, TAIL) and writer.fast == 1


def test_a_prepared_frame_goes_to_the_socket_at_once_and_what_the_kernel_does_not_take_waits_in_order():
    """On a real Twisted TCP connection: written with one ``send()`` while nothing is buffered; once the kernel's
    buffer is full the rest goes to Twisted's buffer, and later frames queue behind it (nothing is reordered)."""
    from twisted.internet import tcp

    ours, theirs = socket.socketpair()
    ours.setblocking(False)
    ours.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4096)

    class Conn(tcp.Connection):
        def startWriting(self):  # no reactor here: just remember that Twisted would wait for writability
            self.waiting = True

    proto, _, _ = open_protocol()
    conn = Conn(ours, proto)
    conn.connected, conn.waiting = True, False
    proto.transport = conn
    writer = FrameWriter(proto)
    small = ws_fast_send.prepared_frame(b"a" * 50, len(TAIL))
    assert writer.send_prepared(small, TAIL)
    assert theirs.recv(65536) == small + TAIL and not conn.waiting  # straight to the socket
    big = ws_fast_send.prepared_frame(b"b" * 500_000, len(TAIL))
    assert writer.send_prepared(big, TAIL) and conn.waiting  # the kernel took part; Twisted holds the rest
    assert writer.send_prepared(small, TAIL)  # behind it, not through it
    held = b"".join(conn._tempDataBuffer) + conn.dataBuffer[conn.offset:]
    assert held.endswith(small + TAIL) and len(held) < len(big) + len(TAIL) + len(small) + len(TAIL)
    ours.close()
    theirs.close()


def _refused(proto, text: str = "hello") -> bool:
    transport = proto.transport
    before = transport.value()
    writer = FrameWriter(proto)
    refused = writer.send_text(text) is None
    if refused:
        assert transport.value() == before  # nothing written when it steps aside
    else:
        assert transport.value() == before + _via_asgi(text)
    assert (writer.fast, writer.fallback) == ((0, 1) if refused else (1, 0))
    return refused


def test_an_empty_text_is_left_to_daphne_which_sends_nothing_for_it():
    proto, _, _ = open_protocol()
    assert _refused(proto, "") and _via_asgi("") == b""


def test_it_steps_aside_when_the_socket_is_not_open():
    for state in (WebSocketProtocol.STATE_CONNECTING, WebSocketProtocol.STATE_CLOSING,
                  WebSocketProtocol.STATE_CLOSED):
        proto, _, _ = open_protocol()
        proto.state = state
        assert _refused(proto)


def test_it_steps_aside_for_compression_masking_logging_and_queued_writes():
    proto, _, _ = open_protocol()
    proto._perMessageCompress = object()  # permessage-deflate negotiated
    assert _refused(proto)
    proto, _, _ = open_protocol(maskServerFrames=True)
    assert _refused(proto)
    proto, _, _ = open_protocol()
    proto.logFrames = True
    assert _refused(proto)
    proto, _, _ = open_protocol()
    proto.send_queue.append((b"chopped", True))  # Autobahn's own queue must drain first, to keep the order
    assert _refused(proto)
    proto, _, _ = open_protocol()
    assert not _refused(proto)


def test_it_steps_aside_for_messages_autobahn_would_refuse_or_fragment():
    proto, _, _ = open_protocol(maxMessagePayloadSize=100)
    assert _refused(proto, "x" * 101) and not _refused(proto, "x" * 100)
    proto, _, _ = open_protocol(autoFragmentSize=50)
    assert _refused(proto, "x" * 51) and not _refused(proto, "x" * 50)


def test_only_daphnes_own_send_is_recognised():
    proto, _, server = open_protocol()
    daphne_send = functools.partial(Server.handle_reply.__get__(server), proto)
    assert ws_fast_send.daphne_protocol(daphne_send) is proto

    async def other_send(message):
        return None

    assert ws_fast_send.daphne_protocol(other_send) is None
    assert ws_fast_send.daphne_protocol(functools.partial(other_send)) is None
    assert ws_fast_send.daphne_protocol(functools.partial(Server.handle_reply.__get__(server), object())) is None


def test_the_middleware_offers_a_writer_to_websockets_on_daphne_only():
    seen = []

    async def app(scope, receive, send):
        seen.append(scope)

    proto, _, server = open_protocol()
    daphne_send = functools.partial(Server.handle_reply.__get__(server), proto)

    async def other_send(message):
        return None

    middleware = FastSendMiddleware(app)
    original = {"type": "websocket", "path": "/ws/playback/", "extensions": {"websocket.http.response": {}}}
    asyncio.run(middleware(original, None, daphne_send))
    asyncio.run(middleware({"type": "websocket"}, None, other_send))
    asyncio.run(middleware({"type": "http"}, None, daphne_send))
    assert isinstance(ws_fast_send.writer(seen[0]), FrameWriter)
    assert seen[0]["extensions"]["websocket.http.response"] == {}  # the server's own extensions are kept
    assert "extensions" not in original or ws_fast_send.EXTENSION not in original["extensions"]  # not mutated
    assert ws_fast_send.writer(seen[1]) is None and ws_fast_send.writer(seen[2]) is None


# --- a real Daphne, a real client reading the raw wire ---------------------------------------------------------


class RawClient:
    """A websocket client on a bare socket that keeps every server frame's bytes as they came off the wire."""

    def __init__(self, host: str, port: int) -> None:
        self.sock = socket.create_connection((host, port), timeout=10)
        key = base64.b64encode(os.urandom(16)).decode()
        self.sock.sendall((f"GET /ws/playback/ HTTP/1.1\r\nHost: {host}:{port}\r\nUpgrade: websocket\r\n"
                           f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n"
                           f"Origin: http://{host}:{port}\r\n\r\n").encode())
        self.buf = b""
        while b"\r\n\r\n" not in self.buf:
            self.buf += self.sock.recv(65536)
        head, self.buf = self.buf.split(b"\r\n\r\n", 1)
        assert head.startswith(b"HTTP/1.1 101"), head

    def send(self, **msg) -> None:
        payload = json.dumps(msg).encode()
        mask = os.urandom(4)
        assert len(payload) < 126
        masked = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
        self.sock.sendall(bytes((0x81, 0x80 | len(payload))) + mask + masked)

    def _need(self, n: int) -> None:
        while len(self.buf) < n:
            chunk = self.sock.recv(65536)
            assert chunk, "the server closed the connection"
            self.buf += chunk

    def recv_raw(self) -> tuple[bytes, str]:
        """One server frame: its raw bytes (header and payload) and its text."""
        self._need(2)
        n, start = self.buf[1] & 0x7F, 2
        if n == 126:
            self._need(4)
            n, start = struct.unpack("!H", self.buf[2:4])[0], 4
        elif n == 127:
            self._need(10)
            n, start = struct.unpack("!Q", self.buf[2:10])[0], 10
        self._need(start + n)
        raw, self.buf = self.buf[:start + n], self.buf[start + n:]
        return raw, raw[start:].decode()

    def recv(self) -> dict:
        return json.loads(self.recv_raw()[1])

    def close(self) -> None:
        self.sock.close()


@pytest.fixture
def server(service_env, request) -> str:
    service_env["PACELAB_TEST_HOOKS"] = "1"
    return request.getfixturevalue("daphne_server")


@pytest.mark.integration
def test_a_real_daphne_sends_live_frames_on_the_fast_path_with_autobahns_exact_bytes(server):
    from playback.core.stream import Piece, Stream
    from playback.services.delivery import playback_create

    # small frames, one over 125 bytes of UTF-8 (a 16-bit length) and one over 64 KiB (a 64-bit length)
    texts = ["tok ", "你好 ", "y" * 200, "z" * 70000, "end"]
    stream = Stream(tuple(Piece(t, i * 20.0) for i, t in enumerate(texts)))
    playback = playback_create(stream=stream, mode="live", config={"pacer": "shared"})
    host, port = server.split("//", 1)[1].split(":")
    client = RawClient(host, int(port))
    try:
        client.send(type="hello", token=playback.token)
        assert client.recv()["type"] == "ready"
        client.send(type="start")
        frames = [client.recv_raw() for _ in texts]
        raw_end, end = client.recv_raw()
        client.send(type="debug")
        debug = client.recv()
    finally:
        client.close()
    messages = [json.loads(text) for _, text in frames]
    assert [m["type"] for m in messages] == ["frame"] * len(texts)
    assert [m["seq"] for m in messages] == list(range(len(texts)))
    assert [m["text"] for m in messages] == texts
    assert json.loads(end) == {"type": "end", "reason": "complete", "frames": len(texts), "sent": len(texts)}
    # every frame went the short way, and its bytes are what Daphne's ASGI path writes for the same text
    assert debug["fast_frames"] == len(texts) and debug["fallback_frames"] == 0
    for raw, text in frames:
        assert raw == _via_asgi(text)
    assert raw_end == _via_asgi(end)  # the end message (ASGI path) comes after the fast frames, in order
