"""Anthropic Messages streams captured as server-sent events.

Events: ``message_start`` (opens the stream: kept as one empty, zero-token piece, the first byte),
``content_block_start`` (a ``text`` or ``thinking`` block), ``content_block_delta`` with ``text_delta``
(content channel) or ``thinking_delta`` (reasoning channel), ``content_block_stop``, ``message_delta``
(``usage.output_tokens``, cumulative: the last one wins), ``message_stop``, ``ping``. ``signature_delta``,
``input_json_delta`` (tool use) and unknown event types carry no visible text and are skipped, as the API
reference asks clients to do. An ``error`` event (e.g. ``overloaded_error`` mid-stream) or a non-200 status
makes the request an error: the truncated stream is not imported and the error is named in the notes.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from playback.core.importers.base import ImportResult, TraceFormatError
from playback.core.importers.openai_sse import header_status_error, prompt_of
from playback.core.importers.sse import CapturedRequest, assumed_times_note, read_capture
from playback.core.stream import Piece, Stream, StreamMeta

DELTA_CHANNELS = {"text_delta": ("text", "content"), "thinking_delta": ("thinking", "reasoning")}


def _count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


class AnthropicSSEImporter:
    name = "anthropic_sse"
    description = "Anthropic Messages stream, captured as timestamped SSE"

    def sniff(self, head: bytes, path: Path) -> bool:
        text = head.decode("utf-8", errors="replace").lstrip("\ufeff")
        api = re.search(r'^# pacelab-sse v\d+ .*"api"\s*:\s*"(\w+)"', text, re.M)
        if api:
            return api.group(1) == "anthropic"
        return bool(re.search(r'^(?:[\d.]+\t)?(?:event: ?message_start|data: ?\{"type": ?"message_start")', text, re.M))

    def load(self, path: Path, *, assume_interval_ms: float | None = None) -> ImportResult:
        path = Path(path)
        result = ImportResult(format=self.name, path=str(path))
        for req in read_capture(path, assume_interval_ms=assume_interval_ms):
            stream, failure = self._request(path, req)
            if failure:
                result.notes.append(f"{req.where}: request failed ({failure}); not imported")
                continue
            if stream is not None and not req.timed:
                stream = stream.with_pieces(stream.pieces, note=assumed_times_note(assume_interval_ms))
            if stream is not None:
                result.streams.append(stream)
        return result

    def _request(self, path: Path, req: CapturedRequest) -> tuple[Stream | None, str | None]:
        failure = header_status_error(req)
        pieces: list[Piece] = []
        message_id = model = ""
        output_tokens: int | None = None
        stopped = False
        for ev in req.events:
            where = f"{req.where}, line {ev.line}" if ev.line else req.where
            t = ev.t_ms or 0.0
            obj, kind = _event_object(path, where, ev)
            if kind == "error":
                err = obj.get("error") or {}
                failure = failure or (
                    f"{err.get('type', 'error')}: {err.get('message', '')}" if isinstance(err, dict) else str(err)
                )
            elif kind == "message_start":
                message = obj.get("message")
                if not isinstance(message, dict):
                    raise TraceFormatError(path, where, "message", "expected an object")
                message_id = str(message.get("id") or "")
                model = str(message.get("model") or "")
                if not pieces:
                    pieces.append(Piece("", t, "content", 0))
            elif kind == "content_block_start":
                block = obj.get("content_block")
                if not isinstance(block, dict) or not isinstance(obj.get("index"), int):
                    raise TraceFormatError(path, where, "content_block", "expected an index and a block object")
            elif kind == "content_block_delta":
                piece = _delta_piece(path, where, obj, t)
                if piece is not None:
                    pieces.append(piece)
            elif kind == "message_delta":
                output_tokens = _output_tokens(path, where, obj, output_tokens)
            elif kind == "message_stop":
                stopped = True
        if failure:
            return None, failure
        notes: list[str] = []
        if not stopped:
            notes.append("no message_stop: the capture may be cut short")
        if output_tokens is not None and any(p.channel == "reasoning" for p in pieces):
            notes.append(
                f"usage.output_tokens ({output_tokens}) includes thinking tokens; content tokens are counted per delta"
            )
            output_tokens = None
        meta = StreamMeta(
            source=self.name,
            model=str(req.header.get("model") or model),
            prompt=str(req.header.get("prompt") or prompt_of(req.header.get("request"))),
            notes=tuple(notes),
        )
        sid = str(req.header.get("id") or message_id or req.index)
        return Stream(tuple(pieces), meta=meta, id=sid, output_tokens=output_tokens), None


def _event_object(path: Path, where: str, ev) -> tuple[dict, str]:
    """An event's JSON object and its type, which must agree with the ``event:`` line."""
    try:
        obj = json.loads(ev.data)
    except json.JSONDecodeError as exc:
        raise TraceFormatError(path, where, "data", f"invalid JSON at column {exc.colno}: {exc.msg}") from None
    if not isinstance(obj, dict):
        raise TraceFormatError(path, where, "data", "expected a JSON object")
    kind = obj.get("type", ev.event)
    if ev.event not in ("message", kind):
        raise TraceFormatError(path, where, "type", f"{kind!r} does not match 'event: {ev.event}'")
    return obj, kind


def _delta_piece(path: Path, where: str, obj: dict, t: float) -> Piece | None:
    """The text of a ``content_block_delta`` (text or thinking) as a piece; None for other deltas or no text."""
    delta = obj.get("delta")
    if not isinstance(delta, dict):
        raise TraceFormatError(path, where, "delta", "expected an object")
    key_channel = DELTA_CHANNELS.get(delta.get("type", ""))
    if key_channel is None:
        return None  # signature_delta, input_json_delta, ...
    key, channel = key_channel
    text = delta.get(key)
    if not isinstance(text, str):
        raise TraceFormatError(path, where, f"delta.{key}", f"expected text, got {text!r}")
    return Piece(text, t, channel, 1) if text else None  # type: ignore[arg-type]


def _output_tokens(path: Path, where: str, obj: dict, current: int | None) -> int | None:
    """A ``message_delta``'s ``usage.output_tokens`` (a count), or ``current`` when it has none."""
    usage = obj.get("usage")
    if not (isinstance(usage, dict) and "output_tokens" in usage):
        return current
    if not _count(usage["output_tokens"]):
        raise TraceFormatError(
            path,
            where,
            "usage.output_tokens",
            f"expected a count, got {usage['output_tokens']!r}",
        )
    return usage["output_tokens"]


IMPORTER = AnthropicSSEImporter()
