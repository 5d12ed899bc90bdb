"""PaceLab's own trace format: JSON Lines, one ``Stream.to_obj()`` per line, tagged ``"pacelab_trace": 1``.

A line is ``{"pacelab_trace": 1, "pacelab_stream": 1, "id": ..., "meta": {...}, "output_tokens": ...,
"pieces": [[t_ms, text], [t_ms, text, channel, tokens], ...]}``. Either version key marks a line (a single
``Stream.to_json()`` file is a valid one-line trace); a version other than 1 is refused rather than guessed.
``dump_jsonl`` writes the format and the round trip is exact (floats are written with ``repr``).
Every line is checked before anything is returned, so a broken line loses nothing and imports nothing.
"""

from __future__ import annotations

import json
import math
import os
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from playback.core.importers.base import ImportResult, TraceFormatError
from playback.core.importers.sse import read_text, split_lines
from playback.core.stream import CHANNELS, Piece, Stream, StreamError, StreamMeta

TRACE_VERSION = 1
META_TEXT_FIELDS = ("source", "model", "tokenizer", "prompt", "language")


def _reject_constant(name: str) -> float:
    raise ValueError(f"{name} is not a number PaceLab accepts")


def _count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _piece(raw: Any, fail) -> Piece:
    """One piece in its compact list form (or the dict form ``Piece.from_obj`` also reads), checked."""
    if isinstance(raw, dict):
        raw = [raw.get("t_ms"), raw.get("text"), raw.get("channel", "content"), raw.get("tokens", 1)]
    if not isinstance(raw, list) or len(raw) not in (2, 4):
        return fail("", "expected [t_ms, text] or [t_ms, text, channel, tokens]")
    t_ms, text = raw[0], raw[1]
    channel, tokens = (raw[2], raw[3]) if len(raw) == 4 else ("content", 1)
    if not isinstance(t_ms, (int, float)) or isinstance(t_ms, bool) or not math.isfinite(t_ms):
        return fail("[0]", f"t_ms must be a finite number, got {t_ms!r}")
    if not isinstance(text, str):
        return fail("[1]", f"text must be a string, got {text!r}")
    if channel not in CHANNELS:
        return fail("[2]", f"channel must be one of {CHANNELS}, got {channel!r}")
    if not _count(tokens):
        return fail("[3]", f"tokens must be a count >= 0, got {tokens!r}")
    return Piece(text=text, t_ms=t_ms, channel=channel, tokens=tokens)


def stream_from_line(path: Path, n: int, obj: Any) -> Stream:
    """The stream of line ``n``; any problem is a ``TraceFormatError`` naming the line and the field."""
    where = f"line {n}"
    if not isinstance(obj, dict):
        raise TraceFormatError(path, where, "", "expected a JSON object")
    if "pacelab_trace" not in obj and "pacelab_stream" not in obj:
        raise TraceFormatError(path, where, "pacelab_trace", "missing: not a PaceLab trace line")
    for key in ("pacelab_trace", "pacelab_stream"):
        if key in obj and obj[key] != TRACE_VERSION:
            raise TraceFormatError(
                path, where, key, f"unknown version {obj[key]!r} (this PaceLab reads version {TRACE_VERSION})"
            )
    raw_pieces = obj.get("pieces")
    if not isinstance(raw_pieces, list):
        raise TraceFormatError(path, where, "pieces", "missing or not a list")
    pieces = []
    for k, raw in enumerate(raw_pieces):

        def fail(sub: str, problem: str, k: int = k) -> Piece:
            raise TraceFormatError(path, where, f"pieces[{k}]{sub}", problem)

        pieces.append(_piece(raw, fail))
    meta_obj = obj.get("meta", {})
    if not isinstance(meta_obj, dict):
        raise TraceFormatError(path, where, "meta", "expected an object")
    for key in META_TEXT_FIELDS:
        if key in meta_obj and not isinstance(meta_obj[key], str):
            raise TraceFormatError(path, where, f"meta.{key}", f"expected a string, got {meta_obj[key]!r}")
    notes = meta_obj.get("notes", [])
    if not isinstance(notes, list) or not all(isinstance(x, str) for x in notes):
        raise TraceFormatError(path, where, "meta.notes", "expected a list of strings")
    output_tokens = obj.get("output_tokens")
    if output_tokens is not None and not _count(output_tokens):
        raise TraceFormatError(path, where, "output_tokens", f"expected a count >= 0 or null, got {output_tokens!r}")
    sid = obj.get("id", "")
    if not isinstance(sid, (str, int)) or isinstance(sid, bool):
        raise TraceFormatError(path, where, "id", f"expected a string, got {sid!r}")
    try:
        return Stream(
            pieces=tuple(pieces), meta=StreamMeta.from_obj(meta_obj), id=str(sid), output_tokens=output_tokens
        )
    except StreamError as exc:  # times going backwards, negative times
        field, _, problem = str(exc).partition(": ")
        raise TraceFormatError(path, where, field, problem) from None


def trace_line(stream: Stream) -> str:
    """One line of the format (without the newline)."""
    obj = {"pacelab_trace": TRACE_VERSION, **stream.to_obj()}
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def dump_jsonl(streams: Iterable[Stream], path: str | Path) -> Path:
    """Write streams as a PaceLab trace; the file is replaced atomically, never left half written."""
    path = Path(path)
    text = "".join(trace_line(s) + "\n" for s in streams)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as fh:
            fh.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


class PaceLabJSONLImporter:
    name = "pacelab_jsonl"
    description = "PaceLab trace (JSON Lines, one stream per line)"

    def sniff(self, head: bytes, path: Path) -> bool:
        text = head.decode("utf-8", errors="replace").lstrip("\ufeff \t\r\n")
        first = text.split("\n", 1)[0]
        return first.startswith("{") and ('"pacelab_trace"' in first or '"pacelab_stream"' in first)

    def load(self, path: Path) -> ImportResult:
        path = Path(path)
        result = ImportResult(format=self.name, path=str(path))
        for n, line in enumerate(split_lines(read_text(path)), start=1):
            if not line.strip():
                continue
            try:
                obj = json.loads(line, parse_constant=_reject_constant)
            except json.JSONDecodeError as exc:
                raise TraceFormatError(path, f"line {n}, column {exc.colno}", "", f"invalid JSON: {exc.msg}") from None
            except ValueError as exc:
                raise TraceFormatError(path, f"line {n}", "", str(exc)) from None
            result.streams.append(stream_from_line(path, n, obj))
        if not result.streams:
            raise TraceFormatError(path, "", "", "no streams in the file")
        return result


IMPORTER = PaceLabJSONLImporter()
