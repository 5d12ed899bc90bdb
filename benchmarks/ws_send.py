"""The CPU cost of one websocket text message on Daphne's write paths, per message, in one process.

    .venv/bin/python benchmarks/ws_send.py            # a live frame's size (~130 bytes)
    .venv/bin/python benchmarks/ws_send.py --bytes 32768

Rows (each a real Daphne ``WebSocketProtocol`` from Daphne's own factory, opened, writing into an in-memory
Twisted transport so that only Python's share is timed, no system call):

- ``asgi send``: what a consumer's ``base_send({"type": "websocket.send", "text": ...})`` runs, the coroutine
  ``Server.handle_reply`` driven to its end (Daphne's connection check, ``handle_reply``, ``serverSend``,
  Autobahn's ``sendMessage``, ``sendFrame``, ``sendData``) — the path every frame took before issue 44's fast path;
- ``fast send``: ``pacelab.ws_fast_send.FrameWriter.send_text`` (the checks, the encode, the header, the write);
- ``consumer, text``: a live frame as the playback consumer wrote it before: the head string plus the send-time
  tail formatted as text, ``send_text``, and the already-done awaitable run by the pacer (a StopIteration);
- ``consumer, prepared``: a live frame as it writes it now: the tail formatted as bytes in its fixed width and
  ``send_prepared`` with the frame prepared (header included) when the socket bound; nothing returned;
- ``transport.write``: the prepared frame's bytes written to the transport, the floor.

``x floor`` divides by the last row. Add the kernel's share (one ``send`` system call per message, the same on
every path) to get the per-frame CPU that ``benchmarks/pacing.py`` prints as ``us/frame``.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "support"))  # daphne_ws: the open protocol the fast-send tests use


def _per_call_us(fn, transport, n: int) -> float:
    best = float("inf")
    for _ in range(5):
        transport.clear()
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        best = min(best, (time.perf_counter() - t0) / n * 1e6)
    return best


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bytes", type=int, default=130, help="message size (a live frame is ~130)")
    parser.add_argument("--n", type=int, default=20000, help="messages per timing (best of 5)")
    args = parser.parse_args(argv)

    from daphne.server import Server
    from daphne_ws import open_protocol

    from pacelab.ws_fast_send import FrameWriter, _header, prepared_frame
    from playback.core import protocol

    proto, transport, server = open_protocol("bench")
    handle_reply = Server.handle_reply  # looked up once, outside the timed loop
    text = '{"type":"frame","text":"' + "x" * max(0, args.bytes - 26) + '"}'
    message = {"type": "websocket.send", "text": text}
    writer = FrameWriter(proto)
    prepared = _header(len(text.encode())) + text.encode()

    def asgi() -> None:
        coro = handle_reply(server, proto, message)
        try:
            coro.send(None)
        except StopIteration:
            pass

    def fast() -> None:
        writer.send_text(text).send  # noqa: B018 - SENT, returned without awaiting (as the pacer does)

    transport.clear()
    asgi()
    via_asgi = transport.value()
    transport.clear()
    writer.send_text(text)
    assert transport.value() == via_asgi == prepared, "the fast path's bytes differ from Daphne's"

    frame = protocol.Frame(7, 175.0, "x" * max(1, args.bytes - 120), "content", 1)
    head = protocol.frame_head(frame)
    wire = prepared_frame(head.encode(), protocol.FRAME_TAIL_LEN)
    tail_fmt, tail_len = protocol.FRAME_TAIL, protocol.FRAME_TAIL_LEN

    def consumer_text() -> None:
        sent = writer.send_text(head + protocol.frame_tail(sent_ms=time.time_ns() / 1e6, late_ms=0.25))
        try:
            sent.send(None)
        except StopIteration:
            pass

    def consumer_prepared() -> None:
        tail = tail_fmt % (time.time_ns() / 1e6, 0.25)
        if len(tail) == tail_len:
            writer.send_prepared(wire, tail)

    rows = [("asgi send", _per_call_us(asgi, transport, args.n)),
            ("fast send", _per_call_us(fast, transport, args.n)),
            ("consumer, text", _per_call_us(consumer_text, transport, args.n)),
            ("consumer, prepared", _per_call_us(consumer_prepared, transport, args.n)),
            ("transport.write", _per_call_us(lambda: transport.write(prepared), transport, args.n))]
    floor = rows[-1][1]
    print(f"one {len(prepared)}-byte text message on a Daphne websocket, Python's share (no system call), "
          f"best of 5 x {args.n}")
    print(f"{'path':<20}{'us/message':>12}{'x floor':>9}")
    for name, us in rows:
        print(f"{name:<20}{us:>12.2f}{us / floor:>9.1f}")
    return 0


if __name__ == "__main__":
    asyncio.set_event_loop(asyncio.new_event_loop())
    raise SystemExit(main())
