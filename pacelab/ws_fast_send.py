"""A short write path for a websocket's text messages under Daphne: the prepared RFC 6455 frame goes straight to
the connection's Twisted transport, with back-pressure from that transport's buffer.

Why: an ASGI ``websocket.send`` under Daphne runs ``Server.handle_reply`` (a coroutine), the protocol's
``handle_reply`` and ``serverSend``, Autobahn's ``sendMessage`` (five type asserts, traffic counters, the size
and fragmentation checks), ``sendFrame`` (header built bit by bit, the masking decision, ``b"".join``) and
``sendData`` (a debug log whose arguments are formatted on every call): about two thirds of the server's CPU
per live frame at 500 streams (issue 44, benchmarks/pacing.py with ``--py-spy``). Here one message costs a
UTF-8 encode, a two-byte header and one ``transport.write``.

How it is reached without patching Daphne or Autobahn: ``FastSendMiddleware`` (outermost in ``pacelab.asgi``)
sees the ``send`` Daphne hands every application instance, which is ``functools.partial(server.handle_reply,
protocol)``; when it is exactly that and the protocol is Daphne's ``WebSocketProtocol``, the scope gets a
``FrameWriter`` for that one connection under ``scope["extensions"][EXTENSION]`` (an ASGI extension: only the
application instance that owns the socket sees it). Anywhere else (Channels' test communicator, another server)
there is no extension and consumers send through ASGI as before.

When it applies: a message is written here only while the connection is open and no extension
(permessage-deflate) was negotiated, server frames are not masked, the message fits Autobahn's size and
fragmentation limits, Autobahn is not logging frames/octets or tracking timings and its own send queue is
empty; otherwise ``send_text`` returns None and the caller takes the ASGI path, which behaves (and fails) as
Daphne always did. Autobahn's traffic counters (``trafficStats``, which nothing in Daphne reads) do not count
these messages. The bytes on the wire are exactly what Autobahn would write for the same message
(tests/pacelab/test_ws_fast_send.py compares them with a real Daphne and a real client, and fails if Daphne's
``send`` stops being that ``partial``, so a Daphne upgrade cannot silently turn the fast path off).

Back-pressure is the ASGI path's, unchanged: ``transport.write`` sends what the kernel takes at once
(``pacelab.eager_writes``) and Twisted's buffer keeps the rest for that socket alone, so a client that stops
reading never delays another socket's frames, and its own frames reach it in order once it reads again
(tests/playback/consumers/test_playback.py's stalled client, the ``/slow1`` row of benchmarks/pacing.py). What
a stalled socket can hold is bounded by its stream, whose frames the server holds encoded anyway.
"""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Generator
from typing import Any

EXTENSION = "pacelab.websocket.fast_send"


class _Sent:
    """An awaitable that is already done (``send(None)`` raises StopIteration at once, like a finished
    coroutine): what ``send_text`` returns once the message is written, without making a coroutine."""

    __slots__ = ()

    def __await__(self) -> Generator[Any, None, None]:
        return iter(())

    def send(self, _value: Any) -> None:
        raise StopIteration

    def throw(self, exc: BaseException, *_args: Any) -> None:
        raise exc

    def close(self) -> None:
        return None


SENT = _Sent()


def socket_send(sock: Any, data: bytes) -> int:
    """``sock.send(data)``: a function of its own only so that a profile (py-spy, benchmarks/pacing.py) shows the
    system call apart from the Python around it."""
    return sock.send(data)


def prepared_frame(head: bytes, tail_len: int) -> bytes:
    """A text frame prepared ahead of its send: the header for a payload of ``head`` plus a tail of exactly
    ``tail_len`` bytes that is only known at send time, then ``head``. ``FrameWriter.send_prepared(frame, tail)``
    completes it with one write."""
    return _header(len(head) + tail_len) + head


def prepared_payload(frame: bytes) -> bytes:
    """The ``head`` a ``prepared_frame`` was built from (for the ASGI path, which frames the text itself)."""
    n = frame[1] & 0x7F
    return frame[2 if n < 126 else 4 if n == 126 else 10:]


def _header(n: int) -> bytes:
    """The header of an unmasked, unfragmented text frame (FIN, opcode 1) with an ``n``-byte payload."""
    if n <= 125:
        return bytes((0x81, n))
    if n <= 0xFFFF:
        return b"\x81\x7e" + n.to_bytes(2, "big")
    return b"\x81\x7f" + n.to_bytes(8, "big")


class FrameWriter:
    """Writes one websocket connection's text messages straight to its transport (see the module docstring).

    ``fast`` and ``fallback`` count the messages written here and those handed back to the ASGI path."""

    __slots__ = ("_proto", "_open", "_limit", "_tcp", "fast", "fallback")

    def __init__(self, proto: Any) -> None:
        from autobahn.websocket.protocol import WebSocketProtocol
        from twisted.internet import tcp

        self._proto = proto
        self._open = WebSocketProtocol.STATE_OPEN
        self._limit: int | None = None  # send_prepared's size bound, settled once the connection is open
        self._tcp = tcp.Connection
        self.fast = 0
        self.fallback = 0

    def usable(self) -> bool:
        """Whether a message can be written here now (else the ASGI path must send it)."""
        p = self._proto
        return (p.state == self._open and p._perMessageCompress is None and not p.send_queue
                and not p.maskServerFrames and not p.logFrames and not p.logOctets and not p.trackedTimings
                and p.transport is not None)

    def send_text(self, text: str) -> Awaitable[None] | None:
        """Write ``text`` as one text message: ``SENT`` (an awaitable that is already done) once written, or None
        when this connection cannot take it here now and the caller must send it through ASGI."""
        p = self._proto
        if not text or not self.usable():  # Daphne's ASGI path sends nothing for an empty text: so it stays
            self.fallback += 1
            return None
        payload = text.encode()
        n = len(payload)
        if 0 < p.maxMessagePayloadSize < n or 0 < p.autoFragmentSize < n:
            self.fallback += 1
            return None  # Autobahn's own path refuses or fragments it
        self.fast += 1
        p.transport.write(_header(n) + payload)
        return SENT


    def send_prepared(self, frame: bytes, tail: bytes) -> bool:
        """Write a ``prepared_frame`` completed by ``tail`` (of the length it was prepared for: the caller
        checks) as one write; False when this connection cannot take it here now (the caller then sends the
        message through ``send_text``, which counts it in ``fallback``, or ASGI). The per-frame path of live
        pacing: the checks that cannot change once the connection is open are made once, and when nothing is
        buffered the bytes go to the socket's ``send()`` directly, as ``pacelab.eager_writes`` would after two
        more calls; anything else is Twisted's write."""
        p = self._proto
        limit = self._limit
        if limit is None:
            if not self.usable():
                return False
            limit = self._limit = min((x for x in (p.maxMessagePayloadSize, p.autoFragmentSize) if x > 0),
                                      default=1 << 62)
        data = frame + tail
        t = p.transport
        if p.state != self._open or p.send_queue or t is None or len(data) > limit:
            return False
        self.fast += 1
        if (not isinstance(t, self._tcp) or t.TLS or not t.connected or t.disconnecting or t._tempDataLen
                or t.offset != len(t.dataBuffer)):
            t.write(data)  # something is buffered (or not a plain TCP socket): Twisted's write keeps the order
            return True
        try:
            sent = socket_send(t.socket, data)
        except OSError:  # EAGAIN (the kernel's buffer is full) or a lost connection: Twisted's write settles it
            sent = 0
        if sent != len(data):
            t.write(data[sent:] if sent else data)
        return True


def daphne_protocol(send: Any) -> Any | None:
    """The Daphne ``WebSocketProtocol`` behind an ASGI ``send``, when ``send`` is Daphne's own
    ``partial(server.handle_reply, protocol)``; None for any other ``send``."""
    try:
        from daphne.server import Server
        from daphne.ws_protocol import WebSocketProtocol
    except ImportError:
        return None
    if (type(send) is functools.partial and not send.keywords and len(send.args) == 1
            and getattr(send.func, "__func__", None) is Server.handle_reply
            and isinstance(send.args[0], WebSocketProtocol)):
        return send.args[0]
    return None


def writer(scope: dict[str, Any]) -> FrameWriter | None:
    """The connection's ``FrameWriter`` from its ASGI scope, if the server offered one."""
    return (scope.get("extensions") or {}).get(EXTENSION)


class FastSendMiddleware:
    """Offers a ``FrameWriter`` to websocket applications running under Daphne (``scope["extensions"]``)."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> Any:
        if scope.get("type") == "websocket":
            proto = daphne_protocol(send)
            if proto is not None:
                scope = dict(scope, extensions={**(scope.get("extensions") or {}), EXTENSION: FrameWriter(proto)})
        return await self.app(scope, receive, send)
