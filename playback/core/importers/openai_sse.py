"""OpenAI Chat Completions (and legacy Completions) streams captured as server-sent events.

Each ``data:`` chunk becomes a piece at the time of the line that completed it: ``choices[0].delta.content``
on the content channel, ``delta.reasoning_content`` / ``delta.reasoning`` (vLLM, DeepSeek, OpenRouter) on the
reasoning channel, ``choices[0].text`` for completions. The role-only or empty opening chunk is kept as one
empty, zero-token piece (the first byte, never the first token); later empty chunks (``finish_reason``,
usage) are dropped. Only choice index 0 is read. ``data: [DONE]`` ends the stream; a ``{"error": ...}``
chunk or a non-200 status makes the request an error, left out of the streams and named in the notes.

``ChunkReader`` is shared with the GenAI-Perf importer, whose responses carry the same chunks.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from playback.core.importers.base import ImportResult, TraceFormatError
from playback.core.importers.sse import CapturedRequest, assumed_times_note, read_capture
from playback.core.stream import Piece, Stream, StreamMeta


class ChunkReader:
    """Accumulates the pieces, usage and notes of one request's OpenAI chunks."""

    def __init__(self, path: Path, where: str) -> None:
        self.path = path
        self.where = where
        self.pieces: list[Piece] = []
        self.response_id = ""
        self.model = ""
        self.completion_tokens: int | None = None
        self.reasoning_tokens: int | None = None
        self.other_choices = False
        self.finish_reason: str | None = None
        self.done = False
        self.error: str | None = None

    def _fail(self, where: str, field: str, problem: str) -> TraceFormatError:
        return TraceFormatError(self.path, where, field, problem)

    def add_data(self, data: str, t_ms: float, where: str) -> None:
        """One event's ``data`` (JSON text or ``[DONE]``) received at ``t_ms``."""
        if data.strip() == "[DONE]":
            self.done = True
            return
        try:
            obj = json.loads(data)
        except json.JSONDecodeError as exc:
            raise self._fail(where, "data", f"invalid JSON at column {exc.colno}: {exc.msg}") from None
        self.add_chunk(obj, t_ms, where)

    def add_chunk(self, obj: Any, t_ms: float, where: str) -> None:
        if not isinstance(obj, dict):
            raise self._fail(where, "data", "expected a JSON object")
        if obj.get("error") is not None:
            err = obj["error"]
            self.error = json.dumps(err, ensure_ascii=False) if not isinstance(err, str) else err
            return
        self.response_id = self.response_id or str(obj.get("id") or "")
        self.model = self.model or str(obj.get("model") or "")
        usage = obj.get("usage")
        if isinstance(usage, dict) and usage.get("completion_tokens") is not None:
            tokens = usage["completion_tokens"]
            if not isinstance(tokens, int) or isinstance(tokens, bool) or tokens < 0:
                raise self._fail(where, "usage.completion_tokens", f"expected a count, got {tokens!r}")
            self.completion_tokens = tokens
            details = usage.get("completion_tokens_details")
            if isinstance(details, dict) and isinstance(details.get("reasoning_tokens"), int):
                self.reasoning_tokens = details["reasoning_tokens"]
        choices = obj.get("choices")
        if choices is None:
            choices = []
        if not isinstance(choices, list):
            raise self._fail(where, "choices", "expected a list")
        for k, choice in enumerate(choices):
            if not isinstance(choice, dict):
                raise self._fail(where, f"choices[{k}]", "expected an object")
            if choice.get("index", 0) != 0:
                self.other_choices = True
                continue
            self._add_choice(choice, t_ms, where, k)

    def _add_choice(self, choice: dict, t_ms: float, where: str, k: int) -> None:
        texts: list[tuple[str, str]] = []
        delta = choice.get("delta")
        if isinstance(delta, dict):
            for key in ("reasoning_content", "reasoning"):
                value = delta.get(key)
                if value is None:
                    continue
                if not isinstance(value, str):
                    raise self._fail(where, f"choices[{k}].delta.{key}", f"expected text, got {value!r}")
                if value:
                    texts.append(("reasoning", value))
                    break
            value = delta.get("content")
            if value is not None and not isinstance(value, str):
                raise self._fail(where, f"choices[{k}].delta.content", f"expected text, got {value!r}")
            if value:
                texts.append(("content", value))
        elif delta is not None:
            raise self._fail(where, f"choices[{k}].delta", "expected an object")
        elif "text" in choice:
            value = choice["text"]
            if not isinstance(value, str):
                raise self._fail(where, f"choices[{k}].text", f"expected text, got {value!r}")
            if value:
                texts.append(("content", value))
        if choice.get("finish_reason"):
            self.finish_reason = str(choice["finish_reason"])
        if not texts and not self.pieces:
            self.pieces.append(Piece("", t_ms, "content", 0))  # the opening (role-only) chunk: first byte
        for channel, text in texts:
            self.pieces.append(Piece(text, t_ms, channel, 1))  # type: ignore[arg-type]

    def output_tokens(self) -> tuple[int | None, list[str]]:
        """Content tokens from usage, with a note when reasoning tokens cannot be separated out."""
        if self.completion_tokens is None:
            return None, []
        if not any(p.channel == "reasoning" for p in self.pieces):
            return self.completion_tokens, []
        if self.reasoning_tokens is not None:
            return self.completion_tokens - self.reasoning_tokens, []
        return None, [
            f"usage.completion_tokens ({self.completion_tokens}) includes reasoning tokens without a "
            "breakdown; content tokens are counted per chunk"
        ]

    def notes(self) -> list[str]:
        notes = []
        if self.other_choices:
            notes.append("only choice index 0 imported; the stream had other choices")
        return notes


def prompt_of(body: Any) -> str:
    """The prompt of a request body: the last user message's text, or a completions ``prompt``."""
    if not isinstance(body, dict):
        return ""
    messages = body.get("messages")
    if isinstance(messages, list):
        for msg in reversed(messages):
            if isinstance(msg, dict) and msg.get("role") == "user":
                content = msg.get("content")
                if isinstance(content, str):
                    return content
                if isinstance(content, list):
                    return "".join(
                        part.get("text", "")
                        for part in content
                        if isinstance(part, dict) and part.get("type") == "text"
                    )
    prompt = body.get("prompt")
    return prompt if isinstance(prompt, str) else ""


def header_status_error(req: CapturedRequest) -> str | None:
    """The failure a capture header records (HTTP status other than 200, or a client error), if any."""
    status = req.header.get("status", 200)
    if req.header.get("error"):
        return str(req.header["error"])
    if status != 200:
        return f"HTTP status {status}"
    return None


class OpenAISSEImporter:
    name = "openai_sse"
    description = "OpenAI Chat Completions / Completions stream, captured as timestamped SSE"

    def sniff(self, head: bytes, path: Path) -> bool:
        text = head.decode("utf-8", errors="replace").lstrip("\ufeff")
        api = re.search(r'^# pacelab-sse v\d+ .*"api"\s*:\s*"(\w+)"', text, re.M)
        if api:
            return api.group(1) == "openai"
        if not re.search(r"^(?:[\d.]+\t)?data: ?\{", text, re.M):
            return False
        return '"choices"' in text or "chat.completion" in text or "text_completion" in text

    def load(self, path: Path, *, assume_interval_ms: float | None = None) -> ImportResult:
        path = Path(path)
        result = ImportResult(format=self.name, path=str(path))
        for req in read_capture(path, assume_interval_ms=assume_interval_ms):
            reader = ChunkReader(path, req.where)
            for ev in req.events:
                reader.add_data(ev.data, ev.t_ms or 0.0, f"{req.where}, line {ev.line}" if ev.line else req.where)
            failure = header_status_error(req) or reader.error
            if failure:
                result.notes.append(f"{req.where}: request failed ({failure}); not imported")
                continue
            output_tokens, notes = reader.output_tokens()
            notes += reader.notes()
            if not reader.done:
                notes.append("no 'data: [DONE]': the capture may be cut short")
            if not req.timed:
                notes.append(assumed_times_note(assume_interval_ms))
            body = req.header.get("request")
            meta = StreamMeta(
                source=self.name,
                model=str(req.header.get("model") or reader.model),
                prompt=str(req.header.get("prompt") or prompt_of(body)),
                notes=tuple(notes),
            )
            sid = str(req.header.get("id") or reader.response_id or req.index)
            result.streams.append(Stream(tuple(reader.pieces), meta=meta, id=sid, output_tokens=output_tokens))
        return result


IMPORTER = OpenAISSEImporter()
