"""A cheap websocket client for benchmarks/pacing.py: a raw asyncio protocol that timestamps and keeps what it
receives and parses it only after the run.

Why: the benchmark's clients share the machine's cores with the server under test. A full client library
(``websockets``: frame parsing, UTF-8 validation, a queue and a task switch per message, then ``json.loads``)
costs tens of µs per message, at 20,000 messages/s more CPU than the server itself, and what it takes from the
cores shows up as the server's lateness. Here a received chunk costs an append and a scan of the frame headers
(to find where each message ends, answer pings and see the stream's end): each message's arrival time is that
of the chunk that completed it, which is what a client timestamping on receipt would see. The messages are
decoded (``json.loads``) once every stream of the process has ended.

Only what the benchmark needs: one text message at a time (no fragmentation, no extensions), client frames
masked as RFC 6455 requires, pings answered, a close frame on the way out.
"""

from __future__ import annotations

import asyncio
import base64
import json
import os
import time

_FRAME_PREFIX = b'{"seq":'  # every live frame message starts so (playback.core.protocol.frame_head)


def client_frame(payload: bytes, opcode: int = 1) -> bytes:
    """One masked client frame (RFC 6455 5.3) with ``payload``."""
    n = len(payload)
    if n <= 125:
        head = bytes((0x80 | opcode, 0x80 | n))
    elif n <= 0xFFFF:
        head = bytes((0x80 | opcode, 0xFE)) + n.to_bytes(2, "big")
    else:
        head = bytes((0x80 | opcode, 0xFF)) + n.to_bytes(8, "big")
    key = os.urandom(4)
    masked = bytes(b ^ key[i & 3] for i, b in enumerate(payload))
    return head + key + masked


class RawStream(asyncio.Protocol):
    """One participant's socket: handshake, ``hello``, ``ready``, then ``start`` at ``start_at`` (monotonic s),
    then every message kept raw with its arrival time until a message that is not a frame (``end``, ``error``)."""

    def __init__(self, host: str, port: int, path: str, token: str, start_at: float) -> None:
        self.request = (f"GET {path} HTTP/1.1\r\nHost: {host}:{port}\r\nUpgrade: websocket\r\n"
                        f"Connection: Upgrade\r\nSec-WebSocket-Key: {base64.b64encode(os.urandom(16)).decode()}\r\n"
                        "Sec-WebSocket-Version: 13\r\nOrigin: http://127.0.0.1\r\n\r\n").encode()
        self.token, self.start_at = token, start_at
        self.raw = bytearray()
        self.pos = 0  # where the next message's header starts in ``raw``
        self.spans: list[tuple[float, int, int]] = []  # (arrival ms, payload start, payload end) per message
        self.state = "handshake"
        self.late_ready = False
        self.done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.transport: asyncio.Transport | None = None

    # --- asyncio.Protocol -------------------------------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]
        transport.write(self.request)  # type: ignore[attr-defined]

    def data_received(self, data: bytes) -> None:
        now = time.monotonic() * 1000.0
        raw = self.raw
        raw += data
        if self.state == "handshake":
            end = raw.find(b"\r\n\r\n")
            if end < 0:
                return
            status = bytes(raw[:raw.find(b"\r\n")])
            if b" 101 " not in status + b" ":
                self._fail(f"handshake refused: {status.decode(errors='replace')}")
                return
            del raw[:end + 4]
            self.state = "hello"
            self.transport.write(client_frame(json.dumps({"type": "hello", "token": self.token}).encode()))
        self._scan(now)

    def connection_lost(self, exc: Exception | None) -> None:
        if not self.done.done():  # a ConnectionError is an OSError: ``play`` may try again
            self.done.set_exception(ConnectionError(f"connection lost in state {self.state}: {exc}"))

    # --- messages ---------------------------------------------------------------------------------------

    def _scan(self, now: float) -> None:
        raw, pos = self.raw, self.pos
        size = len(raw)
        while size - pos >= 2:
            opcode, n = raw[pos] & 0x0F, raw[pos + 1] & 0x7F
            start = pos + 2
            if n == 126:
                if size - pos < 4:
                    break
                n, start = int.from_bytes(raw[pos + 2:pos + 4], "big"), pos + 4
            elif n == 127:
                if size - pos < 10:
                    break
                n, start = int.from_bytes(raw[pos + 2:pos + 10], "big"), pos + 10
            end = start + n
            if end > size:
                break
            pos = end
            if opcode == 1:
                if self.state == "playing" and raw.startswith(_FRAME_PREFIX, start):
                    self.spans.append((now, start, end))
                else:
                    self._message(now, start, end)
            elif opcode == 9:  # ping: pong with the same payload
                self.transport.write(client_frame(bytes(raw[start:end]), opcode=10))
            elif opcode == 8:
                self._fail("closed by the server")
        self.pos = pos

    def _message(self, now: float, start: int, end: int) -> None:
        """A message that is not a live frame: ``ready`` (then start on time), or the stream's last one."""
        if self.state == "hello":
            msg = json.loads(bytes(self.raw[start:end]))
            if msg.get("type") != "ready":
                self._fail(f"hello refused: {msg}")
                return
            self.state = "ready"
            asyncio.get_running_loop().call_at(self.start_at, self._start)  # the loop's clock is monotonic too
            self.late_ready = self.start_at < now / 1000.0
            return
        self.spans.append((now, start, end))
        self.state = "ended"
        self.transport.write(client_frame((1000).to_bytes(2, "big"), opcode=8))
        self.transport.close()
        if not self.done.done():
            self.done.set_result(None)

    def _start(self) -> None:
        self.state = "playing"
        self.transport.write(client_frame(b'{"type":"start"}'))

    def _fail(self, why: str) -> None:
        if not self.done.done():
            self.done.set_exception(RuntimeError(why))
        if self.transport is not None:
            self.transport.close()

    def result(self) -> dict:
        """What the benchmark summarises: each frame's ``t_ms``, arrival (ms, monotonic) and the server's
        ``late_ms``, and the last message (``end``); decoded now, after the run."""
        raw = self.raw
        t_ms, arrival, late = [], [], []
        end: dict = {"error": "no end message"}
        for now, start, stop in self.spans:
            msg = json.loads(bytes(raw[start:stop]))
            if msg.get("type") != "frame":
                end = msg
                break
            t_ms.append(msg["t_ms"])
            arrival.append(now)
            late.append(msg["late_ms"])
        return {"t_ms": t_ms, "arrival": arrival, "server_late": late, "end": end, "late_ready": self.late_ready}


async def play(url: str, token: str, start_at: float, attempts: int = 5) -> RawStream:
    """Connect, bind ``token``, start at ``start_at`` and return once the stream ended (raises on failure). A
    connection refused or reset before the handshake completed (hundreds of sockets connecting at once can
    overflow the server's accept queue) is tried again after a short pause, as a browser would."""
    rest = url.split("//", 1)[1]
    hostport, _, path = rest.partition("/")
    host, port = hostport.split(":")
    loop = asyncio.get_running_loop()
    for attempt in range(attempts):
        stream = RawStream(host, int(port), "/" + path, token, start_at)
        try:
            await loop.create_connection(lambda s=stream: s, host, int(port))
            await stream.done
            return stream
        except OSError:
            if stream.state != "handshake" or attempt == attempts - 1:
                raise
            await asyncio.sleep(0.2 * (attempt + 1))
    raise AssertionError("unreachable")
