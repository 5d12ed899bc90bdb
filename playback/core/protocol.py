"""The playback websocket protocol (version 1): inbound validation, the per-socket state machine, outbound shapes.

Pure Python (no Django), so every rule the server enforces is testable on its own. Inbound text is parsed into
small frozen messages; anything malformed raises ``ProtocolError`` whose text names the field and the problem
(``"paint.entries[3].seq: must be an integer >= 0"``). ``Session`` rejects messages that are well formed but out
of order (``stop`` before ``start``, a paint batch that does not increase). The consumer turns either into an
``error`` message and keeps the socket and the session as they were. See docs/protocol.md.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any

from pacelab.jsonb import MAX_EXACT_NUMBER
from playback.core.stream import Piece, Stream

PROTOCOL_VERSION = 1
MAX_MESSAGE_CHARS = 512 * 1024
MAX_ENTRIES_PER_BATCH = 2000
MAX_TOKEN_CHARS = 128
MAX_ABS_MS = MAX_EXACT_NUMBER  # times in ms (epoch or page clock) that a stored paint entry keeps unchanged
MAX_INT = 2**31 - 1  # counters and batch numbers fit a PostgreSQL integer column
MODES = ("prefetch", "live")
INBOUND_TYPES = ("hello", "start", "stop", "paint", "ping")


class ProtocolError(ValueError):
    """An inbound message the server refuses; ``str(exc)`` is sent to the client as is."""


# --- inbound messages ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Hello:
    token: str
    protocol: int = PROTOCOL_VERSION


@dataclass(frozen=True, slots=True)
class Start:
    pass


@dataclass(frozen=True, slots=True)
class Stop:
    pass


@dataclass(frozen=True, slots=True)
class Ping:
    t0: float
    id: Any = None


@dataclass(frozen=True, slots=True)
class Debug:
    """Test hook (only parsed when the server enables it): asks for the live pacing-task count."""


@dataclass(frozen=True, slots=True)
class PaintEntry:
    """One painted frame, as the browser logged it. Times are ms on the client's trial clock (0 = start)."""

    seq: int
    t_ms: float
    recv_ms: float
    paint_ms: float
    chars: int
    hidden: bool = False
    sent_ms: float | None = None
    frame_ms: float | None = None
    dropped: int | None = None
    design_ms: float | None = None  # when the render strategy meant to show it (the player's design clock)

    def to_obj(self) -> dict[str, Any]:
        obj: dict[str, Any] = {"seq": self.seq, "t_ms": self.t_ms, "recv_ms": self.recv_ms,
                               "paint_ms": self.paint_ms, "chars": self.chars, "hidden": self.hidden}
        for key in ("sent_ms", "frame_ms", "dropped", "design_ms"):
            value = getattr(self, key)
            if value is not None:
                obj[key] = value
        return obj


@dataclass(frozen=True, slots=True)
class Clock:
    """The client's estimate of server − client time (ms) from its best ping round, and half that round trip."""

    offset_ms: float
    uncertainty_ms: float
    rtt_ms: float | None = None


@dataclass(frozen=True, slots=True)
class Paint:
    batch: int
    entries: tuple[PaintEntry, ...]
    clock: Clock | None = None


Message = Hello | Start | Stop | Ping | Paint | Debug


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _number(obj: dict, key: str, where: str, *, minimum: float | None = None, optional: bool = False):
    if key not in obj or obj[key] is None:
        if optional:
            return None
        raise ProtocolError(f"{where}.{key}: required")
    value = obj[key]
    if not _is_number(value):
        raise ProtocolError(f"{where}.{key}: must be a number, got {type(value).__name__}")
    if minimum is not None and value < minimum:
        raise ProtocolError(f"{where}.{key}: must be >= {minimum:g}, got {value:g}")
    if abs(value) > MAX_ABS_MS:
        raise ProtocolError(f"{where}.{key}: must be within ±{MAX_ABS_MS:g} ms, got {value:g}")
    return float(value)


def _integer(obj: dict, key: str, where: str, *, minimum: int, optional: bool = False):
    if key not in obj or obj[key] is None:
        if optional:
            return None
        raise ProtocolError(f"{where}.{key}: required")
    value = obj[key]
    if not _is_int(value) or value < minimum:
        raise ProtocolError(f"{where}.{key}: must be an integer >= {minimum}")
    if value > MAX_INT:
        raise ProtocolError(f"{where}.{key}: must be at most {MAX_INT}, got {value}")
    return value


def _entry(obj: Any, where: str) -> PaintEntry:
    if not isinstance(obj, dict):
        raise ProtocolError(f"{where}: must be an object")
    hidden = obj.get("hidden", False)
    if not isinstance(hidden, bool):
        raise ProtocolError(f"{where}.hidden: must be true or false")
    return PaintEntry(
        seq=_integer(obj, "seq", where, minimum=0),
        t_ms=_number(obj, "t_ms", where, minimum=0),
        recv_ms=_number(obj, "recv_ms", where),
        paint_ms=_number(obj, "paint_ms", where),
        chars=_integer(obj, "chars", where, minimum=0),
        hidden=hidden,
        sent_ms=_number(obj, "sent_ms", where, optional=True),
        frame_ms=_number(obj, "frame_ms", where, minimum=0, optional=True),
        dropped=_integer(obj, "dropped", where, minimum=0, optional=True),
        design_ms=_number(obj, "design_ms", where, optional=True),
    )


def _paint(msg: dict) -> Paint:
    batch = _integer(msg, "batch", "paint", minimum=1)
    entries = msg.get("entries")
    if not isinstance(entries, list):
        raise ProtocolError("paint.entries: must be a list")
    if len(entries) > MAX_ENTRIES_PER_BATCH:
        raise ProtocolError(f"paint.entries: at most {MAX_ENTRIES_PER_BATCH} entries per batch, got {len(entries)}")
    parsed = tuple(_entry(e, f"paint.entries[{i}]") for i, e in enumerate(entries))
    clock = msg.get("clock")
    if clock is not None:
        if not isinstance(clock, dict):
            raise ProtocolError("paint.clock: must be an object")
        clock = Clock(
            offset_ms=_number(clock, "offset_ms", "paint.clock"),
            uncertainty_ms=_number(clock, "uncertainty_ms", "paint.clock", minimum=0),
            rtt_ms=_number(clock, "rtt_ms", "paint.clock", minimum=0, optional=True),
        )
    return Paint(batch=batch, entries=parsed, clock=clock)


def _hello(msg: dict) -> Hello:
    protocol = msg.get("protocol", PROTOCOL_VERSION)
    if protocol != PROTOCOL_VERSION or not _is_int(protocol):
        raise ProtocolError(f"hello.protocol: this server speaks version {PROTOCOL_VERSION}, got {protocol!r}")
    token = msg.get("token")
    if not isinstance(token, str) or not token:
        raise ProtocolError("hello.token: must be a non-empty string")
    if len(token) > MAX_TOKEN_CHARS:
        raise ProtocolError(f"hello.token: longer than {MAX_TOKEN_CHARS} characters")
    return Hello(token=token, protocol=protocol)


def parse(text: str | None, *, allow_debug: bool = False) -> Message:
    """One inbound websocket text frame as a message; ``ProtocolError`` names what is wrong with it."""
    if text is None:
        raise ProtocolError("binary frames are not accepted; send JSON text")
    if len(text) > MAX_MESSAGE_CHARS:
        raise ProtocolError(f"message too large: {len(text)} characters, at most {MAX_MESSAGE_CHARS}")
    try:
        msg = json.loads(text)
    except ValueError as exc:
        raise ProtocolError(f"malformed JSON: {exc}") from None
    if not isinstance(msg, dict):
        raise ProtocolError("message must be a JSON object")
    kind = msg.get("type")
    if kind == "hello":
        return _hello(msg)
    if kind == "start":
        return Start()
    if kind == "stop":
        return Stop()
    if kind == "ping":
        return Ping(t0=_number(msg, "t0", "ping"), id=msg.get("id"))
    if kind == "paint":
        return _paint(msg)
    if kind == "debug" and allow_debug:
        return Debug()
    raise ProtocolError(f"unknown message type {kind!r}; expected one of {', '.join(INBOUND_TYPES)}")


# --- the per-socket state machine -----------------------------------------------------------------


class Session:
    """What one socket may do next: bind a playback (``hello``), start it once, stop it while it runs, and send
    paint batches with strictly increasing numbers once bound. ``check`` raises before anything changes."""

    def __init__(self) -> None:
        self.bound = False
        self.state = "idle"  # idle -> running -> ended
        self.last_batch = 0

    def check(self, msg: Message) -> None:
        if isinstance(msg, Ping | Debug):
            return
        if isinstance(msg, Hello):
            if self.bound:
                raise ProtocolError("hello: this socket is already bound to a playback")
            return
        name = type(msg).__name__.lower()
        if not self.bound:
            raise ProtocolError(f"{name}: send hello with the playback token first")
        if isinstance(msg, Start) and self.state != "idle":
            raise ProtocolError(f"start: the trial has already {'started' if self.state == 'running' else 'ended'}")
        if isinstance(msg, Stop) and self.state != "running":
            raise ProtocolError("stop: no trial is running" if self.state == "idle" else "stop: the trial has ended")
        if isinstance(msg, Paint) and msg.batch <= self.last_batch:
            raise ProtocolError(f"paint.batch: {msg.batch} is not greater than the last batch {self.last_batch}")

    def bind(self) -> None:
        self.bound = True

    def started(self) -> None:
        self.state = "running"

    def ended(self) -> None:
        self.state = "ended"

    def painted(self, batch: int) -> None:
        self.last_batch = batch


# --- frames and outbound messages -------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Frame:
    """One piece of a stream as delivered: its sequence number and scheduled time from the trial start."""

    seq: int
    t_ms: float
    text: str
    channel: str = "content"
    tokens: int = 1

    def to_obj(self) -> dict[str, Any]:
        return {"seq": self.seq, "t_ms": self.t_ms, "text": self.text, "channel": self.channel,
                "tokens": self.tokens}


def frames_of(stream: Stream | dict[str, Any]) -> list[Frame]:
    """The frames of a stream (or its stored JSON object), numbered from 0 in emission order."""
    if isinstance(stream, dict):
        stream = Stream.from_obj(stream)
    return [Frame(seq=i, t_ms=p.t_ms, text=p.text, channel=p.channel, tokens=p.tokens)
            for i, p in enumerate(stream.pieces)]


def frames_of_stored(obj: dict[str, Any]) -> list[Frame]:
    """The frames of a stream object this server stored itself (validated by ``Stream.from_obj`` when it was
    written), without validating it again: binding a socket must cost microseconds per piece, because
    hundreds of sockets bind while others are already pacing in the same process."""
    pieces = (Piece.from_obj(p) for p in obj["pieces"])  # the stored format's one decoder, no validation
    return [Frame(i, p.t_ms, p.text, p.channel, p.tokens) for i, p in enumerate(pieces)]


@dataclass(frozen=True, slots=True)
class LiveFrames:
    """A stream ready for live pacing: each frame's scheduled time and its ``frame`` message up to the
    send-time fields (``frame_head``), encoded once when the socket binds.

    Two flat lists of floats and strings rather than a list of ``Frame`` objects: neither floats nor strings
    are tracked by the garbage collector, and a process pacing hundreds of streams would otherwise hold
    hundreds of thousands of tracked objects that every full collection walks while the event loop waits
    (100+ ms on these machines, benchmarks/pacing.py).
    """

    t_ms: list[float]
    heads: list[str]

    @classmethod
    def of(cls, frames: list[Frame]) -> LiveFrames:
        return cls(t_ms=[f.t_ms for f in frames], heads=[frame_head(f) for f in frames])

    def __len__(self) -> int:
        return len(self.t_ms)


def _dump(obj: dict[str, Any]) -> str:
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"))


def ready_msg(*, mode: str, config: dict[str, Any], frames: int, t_server: float) -> str:
    return _dump({"type": "ready", "protocol": PROTOCOL_VERSION, "mode": mode, "config": config,
                  "frames": frames, "t_server": t_server})


# Daphne refuses to send a websocket message over 1 MiB (its --websocket_max_message_size, autobahn's check),
# and closes the socket with 1011; a long reasoning trace's schedule can be several MiB. It goes in parts.
MAX_SCHEDULE_BYTES = 768 * 1024


def schedule_msgs(frames: list[Frame], *, t_server: float, max_bytes: int = MAX_SCHEDULE_BYTES) -> list[str]:
    """The schedule in ``schedule`` messages of at most ``max_bytes`` of UTF-8 each (``part`` 1..``parts``, in
    order; the client starts once it has them all). A single frame larger than the budget gets a part of its own.
    """
    encoded = [_dump(f.to_obj()) for f in frames]
    chunks: list[list[str]] = [[]]
    size = 0
    room = max_bytes - 200  # the envelope: type, part numbers, t_server
    for text in encoded:
        n = len(text.encode()) + 1
        if chunks[-1] and size + n > room:
            chunks.append([])
            size = 0
        chunks[-1].append(text)
        size += n
    parts = len(chunks)
    head = _dump({"type": "schedule", "t_server": t_server, "parts": parts})[:-1]
    return [f'{head},"part":{k},"frames":[{",".join(chunk)}]}}' for k, chunk in enumerate(chunks, start=1)]


_encode_str = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode


def frame_head(frame: Frame) -> str:
    """The part of a ``frame`` message known before it is sent; ``frame_tail`` completes it at send time.

    Formatted directly (five times faster than ``json.dumps`` of a dict): a live socket encodes every frame of
    its stream while it binds, and hundreds bind at once while others are pacing in the same process.
    """
    return (f'{{"seq":{int(frame.seq)},"t_ms":{float(frame.t_ms)!r},"text":{_encode_str(frame.text)},'
            f'"channel":{_encode_str(frame.channel)},"tokens":{int(frame.tokens)},"type":"frame"')


# The send-time fields of a live frame, in a fixed width so that a frame's length, and with it its websocket
# header, is known when the stream is loaded (``LiveFrames``): ``sent_ms`` (epoch ms) has 13 digits until 2286,
# ``late_ms`` is padded with spaces (JSON whitespace) to 10 characters, which holds up to 16 minutes late.
# A value that does not fit just makes a longer tail (``len(tail) != FRAME_TAIL_LEN``), framed at send time.
_TAIL = ',"sent_ms":%.3f,"late_ms":%-10.3f}'
FRAME_TAIL = _TAIL.encode()
FRAME_TAIL_LEN = len(FRAME_TAIL % (1.7e12, 0.0))


def frame_tail(*, sent_ms: float, late_ms: float) -> str:
    """The send-time fields that complete ``frame_head`` into a ``frame`` message, to the microsecond (a fixed
    format is half the cost of ``repr`` of a rounded float, once per live frame); ``FRAME_TAIL % (sent_ms,
    late_ms)`` is the same as bytes."""
    return _TAIL % (sent_ms, late_ms)


def end_msg(*, reason: str, frames: int, sent: int) -> str:
    return _dump({"type": "end", "reason": reason, "frames": frames, "sent": sent})


def pong_msg(ping: Ping, *, t1: float, t2: float) -> str:
    return _dump({"type": "pong", "id": ping.id, "t0": ping.t0, "t1": t1, "t2": t2})


def ack_msg(*, batch: int, stored: bool, entries: int) -> str:
    return _dump({"type": "ack", "batch": batch, "stored": stored, "entries": entries})


def debug_msg(*, live_tasks: int, fast_frames: int | None = None, fallback_frames: int | None = None) -> str:
    """Test hooks only: live streams in the process and, under Daphne, how many of this socket's messages took
    the short write path (``fast_frames``) and how many went through ASGI although it was offered."""
    msg: dict[str, Any] = {"type": "debug", "live_tasks": live_tasks}
    if fast_frames is not None:
        msg.update(fast_frames=fast_frames, fallback_frames=fallback_frames)
    return _dump(msg)


def error_msg(error: str) -> str:
    return _dump({"type": "error", "error": error})
