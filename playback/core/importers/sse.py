"""Server-sent events parsing shared by the SSE-carrying importers (GenAI-Perf, OpenAI, Anthropic captures).

Follows the WHATWG event-stream rules that matter for LLM APIs: ``field: value`` lines (one optional
space after the colon), ``data`` lines joined with ``\\n``, ``event`` naming the type, ``:`` comments
ignored, a blank line dispatching the event, and CR, LF or CRLF line ends. Unlike a browser, an event left
open at the end of the input is still dispatched: a capture cut after its last ``data:`` line has lost
nothing but the blank line.

The parser is fed line by line with an optional time and line number, so timestamped captures can give
each event the time of the line that completed it (when a client could first act on it).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from playback.core.importers.base import TraceFormatError

# Line ends of an event stream: CRLF, a lone CR, or LF (not str.splitlines, which also splits on U+2028 etc.).
LINE_END = re.compile(r"\r\n|\r|\n")


@dataclass(frozen=True, slots=True)
class SSEEvent:
    """One dispatched event: its type (``"message"`` when no ``event:`` line), data, time and first line."""

    event: str
    data: str
    t_ms: float | None = None
    line: int = 0


def split_lines(text: str) -> list[str]:
    """Lines of an event stream, without their line ends; a final line end does not add an empty line."""
    lines = LINE_END.split(text)
    if lines and lines[-1] == "":
        lines.pop()
    return lines


class SSEParser:
    """Incremental event-stream parser: ``feed`` one line at a time, then ``finish``."""

    def __init__(self) -> None:
        self._event = ""
        self._data: list[str] = []
        self._first_line = 0
        self._last_t: float | None = None

    def feed(self, line: str, t_ms: float | None = None, lineno: int = 0) -> SSEEvent | None:
        """Take one line (no line end); return the event it completes, if any."""
        if line == "":
            return self._dispatch(t_ms)
        if line.startswith(":"):
            return None
        name, sep, value = line.partition(":")
        if sep and value.startswith(" "):
            value = value[1:]
        if name == "data":
            if not self._data and not self._event:
                self._first_line = lineno
            self._data.append(value)
            self._last_t = t_ms
        elif name == "event":
            if not self._data and not self._event:
                self._first_line = lineno
            self._event = value
            self._last_t = t_ms
        # "id", "retry" and unknown fields carry nothing a trace needs.
        return None

    def finish(self) -> SSEEvent | None:
        """Dispatch an event still open at the end of the input."""
        return self._dispatch(self._last_t)

    def _dispatch(self, t_ms: float | None) -> SSEEvent | None:
        if not self._data:
            self._event = ""
            return None
        ev = SSEEvent(event=self._event or "message", data="\n".join(self._data), t_ms=t_ms, line=self._first_line)
        self._event = ""
        self._data = []
        self._last_t = None
        return ev


def parse(text: str) -> Iterator[SSEEvent]:
    """All events of an untimestamped event-stream text (line numbers count from 1)."""
    parser = SSEParser()
    for lineno, line in enumerate(split_lines(text), start=1):
        ev = parser.feed(line, None, lineno)
        if ev is not None:
            yield ev
    ev = parser.finish()
    if ev is not None:
        yield ev


# --- PaceLab's timestamped capture files ------------------------------------------------------------------

CAPTURE_MAGIC = "# pacelab-sse "
CAPTURE_VERSION = 1
_HEADER = re.compile(r"# pacelab-sse v(\d+)\s*(.*)\Z", re.S)
RECORDER_HINT = (
    "record captures with scripts/record_sse.py (a '# pacelab-sse v1 {...}' header, then one "
    "'<ms since the request was sent>\\t<SSE line>' per line; see docs/trace-formats.md)"
)


def assumed_times_note(interval_ms: float) -> str:
    """The note on a stream whose times were made up (see ``read_capture``)."""
    return f"times assumed: events {interval_ms:g} ms apart (the capture had no timestamps)"


@dataclass(frozen=True, slots=True)
class CapturedRequest:
    """One request of a capture file: its header fields, its events (timed) and where it starts."""

    index: int
    line: int
    header: dict
    events: tuple[SSEEvent, ...]
    timed: bool

    @property
    def where(self) -> str:
        return f"request {self.index} (line {self.line})" if self.line else f"request {self.index}"


def read_text(path: Path) -> str:
    """The file as text; a file that is not UTF-8 is a format error, not a crash."""
    raw = path.read_bytes()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise TraceFormatError(path, f"byte {exc.start}", "", "not UTF-8 text") from None
    return text.removeprefix("\ufeff")


def read_capture(path: Path, *, assume_interval_ms: float | None = None) -> list[CapturedRequest]:
    """Requests of an SSE capture file, timed from its per-line prefixes.

    A raw capture without a ``# pacelab-sse`` header has no times: it is refused unless
    ``assume_interval_ms`` is given, and then its events are placed that many ms apart (made-up times,
    for inspecting a capture, never for a study).
    """
    lines = split_lines(read_text(path))
    if not any(line.startswith(CAPTURE_MAGIC) for line in lines):
        return [_untimed_capture(path, lines, assume_interval_ms)]

    requests: list[CapturedRequest] = []
    parser: SSEParser | None = None
    header: dict = {}
    header_line = 0
    events: list[SSEEvent] = []
    last_t = 0.0

    def close() -> None:
        if parser is None:
            return
        ev = parser.finish()
        if ev is not None:
            events.append(ev)
        requests.append(CapturedRequest(len(requests), header_line, header, tuple(events), True))

    for n, line in enumerate(lines, start=1):
        if line.startswith(CAPTURE_MAGIC):
            close()
            header = _capture_header(path, line, n)
            parser, header_line, events, last_t = SSEParser(), n, [], 0.0
            continue
        if line == "" or line.startswith("#"):
            continue  # blank separators and file comments are not SSE lines
        if parser is None:
            raise TraceFormatError(path, f"line {n}", "", "line before the first '# pacelab-sse v1' header")
        t_str, tab, sse_line = line.partition("\t")
        if not tab:
            raise TraceFormatError(path, f"line {n}", "", "expected '<ms since request>\\t<SSE line>'")
        last_t = _line_time(path, t_str, n, last_t)
        ev = parser.feed(sse_line, last_t, n)
        if ev is not None:
            events.append(ev)
    close()
    return requests


def _untimed_capture(path: Path, lines: list[str], assume_interval_ms: float | None) -> CapturedRequest:
    """A raw capture (no ``# pacelab-sse`` header): refused, or placed ``assume_interval_ms`` apart."""
    for n, line in enumerate(lines, start=1):
        if re.match(r"\d+(\.\d*)?\t", line):
            raise TraceFormatError(path, f"line {n}", "header", f"timestamped lines need a header; {RECORDER_HINT}")
    if assume_interval_ms is None:
        raise TraceFormatError(
            path,
            "",
            "timestamps",
            "this raw SSE capture has no per-line times, so its pacing is unknown and it cannot be "
            f"replayed; {RECORDER_HINT}; or import it with assume_interval_ms=<ms> to place its events "
            "at evenly spaced, made-up times for inspection only",
        )
    if not (
        isinstance(assume_interval_ms, (int, float))
        and math.isfinite(assume_interval_ms)
        and assume_interval_ms > 0
    ):
        raise ValueError(f"assume_interval_ms must be a positive number of ms, got {assume_interval_ms!r}")
    events = tuple(
        SSEEvent(ev.event, ev.data, k * float(assume_interval_ms), ev.line)
        for k, ev in enumerate(parse("\n".join(lines)))
    )
    return CapturedRequest(index=0, line=0, header={}, events=events, timed=False)


def _capture_header(path: Path, line: str, n: int) -> dict:
    """The JSON object of a ``# pacelab-sse v1 {...}`` line."""
    m = _HEADER.match(line)
    if not m:
        raise TraceFormatError(path, f"line {n}", "header", "expected '# pacelab-sse v1 {...}'")
    if int(m.group(1)) != CAPTURE_VERSION:
        raise TraceFormatError(
            path,
            f"line {n}",
            "version",
            f"unknown capture version v{m.group(1)} (this PaceLab reads v1)",
        )
    try:
        header = json.loads(m.group(2) or "{}")
    except json.JSONDecodeError as exc:
        col = len(line) - len(m.group(2)) + exc.colno
        raise TraceFormatError(path, f"line {n}, column {col}", "header", f"invalid JSON: {exc.msg}") from None
    if not isinstance(header, dict):
        raise TraceFormatError(path, f"line {n}", "header", "expected a JSON object")
    return header


def _line_time(path: Path, t_str: str, n: int, last_t: float) -> float:
    """A timed line's ms since the request: a finite number, never earlier than the line before."""
    try:
        t = float(t_str)
    except ValueError:
        raise TraceFormatError(path, f"line {n}", "time", f"{t_str!r} is not a number") from None
    if not math.isfinite(t) or t < 0:
        raise TraceFormatError(path, f"line {n}", "time", f"must be a finite number >= 0, got {t_str}")
    if t < last_t:
        raise TraceFormatError(
            path, f"line {n}", "time", f"{t_str} ms is earlier than the previous line ({last_t} ms)"
        )
    return t
