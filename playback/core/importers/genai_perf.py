"""NVIDIA GenAI-Perf / Perf Analyzer ``profile_export.json``: per-response timestamps with the response text.

Shape: ``experiments[].requests[]``, each with ``timestamp`` (request send, ns), ``response_timestamps`` (ns,
one per response) and ``response_outputs`` (one per response). For the OpenAI service kind a response is
``{"response": "<raw SSE text>"}`` holding one or more ``data:`` chunks (Perf Analyzer merges chunks that
arrive together; they become one piece carrying several tokens); for the Triton service kind it is
``{"text_output": "..."}``. Each chunk becomes a piece at ``(response_timestamp - timestamp) / 1e6`` ms,
read with the OpenAI chunk rules (``playback.core.importers.openai_sse.ChunkReader``), so the role-only opening
response is an empty, zero-token piece that never counts as the first token, and a usage chunk gives
``output_tokens``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from playback.core.importers.base import ImportResult, TraceFormatError
from playback.core.importers.openai_sse import ChunkReader, prompt_of
from playback.core.importers.sse import parse, read_text
from playback.core.stream import Piece, Stream, StreamMeta


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and value == value  # not NaN


def _coalesce(pieces: list[Piece]) -> list[Piece]:
    """Chunks that arrived in one response become one multi-token piece per channel."""
    out: list[Piece] = []
    for p in pieces:
        last = out[-1] if out else None
        if last is not None and last.channel == p.channel and last.tokens and p.tokens:
            out[-1] = Piece(last.text + p.text, last.t_ms, last.channel, last.tokens + p.tokens)
        else:
            out.append(p)
    return out


def _load_json(path: Path) -> Any:
    try:
        return json.loads(read_text(path))
    except json.JSONDecodeError as exc:
        raise TraceFormatError(path, f"line {exc.lineno}, column {exc.colno}", "", f"invalid JSON: {exc.msg}") from None


class GenAIPerfImporter:
    name = "genai_perf"
    description = "NVIDIA GenAI-Perf / Perf Analyzer profile_export.json (per-response timestamps and text)"

    def sniff(self, head: bytes, path: Path) -> bool:
        text = head.decode("utf-8", errors="replace")
        return (
            text.lstrip("\ufeff \t\r\n").startswith("{")
            and '"experiments"' in text
            and ('"response_timestamps"' in text or '"service_kind"' in text)
        )

    def load(self, path: Path) -> ImportResult:
        path = Path(path)
        doc = _load_json(path)
        if not isinstance(doc, dict) or not isinstance(doc.get("experiments"), list):
            raise TraceFormatError(path, "", "experiments", "expected an object with an 'experiments' list")
        result = ImportResult(format=self.name, path=str(path))
        for i, experiment in enumerate(doc["experiments"]):
            if not isinstance(experiment, dict) or not isinstance(experiment.get("requests"), list):
                raise TraceFormatError(path, f"experiments[{i}]", "requests", "expected a list of requests")
            for j, request in enumerate(experiment["requests"]):
                stream = self._request(path, i, j, request)
                if isinstance(stream, Stream):
                    result.streams.append(stream)
                else:
                    result.notes.append(f"experiments[{i}].requests[{j}]: request failed ({stream}); not imported")
        return result

    def _request(self, path: Path, i: int, j: int, request: Any) -> Stream | str:
        """The request's stream, or the error the server streamed instead."""
        where = f"experiments[{i}].requests[{j}]"
        start, times, outputs = _series(path, where, request)
        reader = ChunkReader(path, where)
        triton_pieces: list[Piece] = []
        previous = start
        for k, (t_ns, output) in enumerate(zip(times, outputs, strict=True)):
            if not _number(t_ns):
                raise TraceFormatError(path, where, f"response_timestamps[{k}]", f"expected a time in ns, got {t_ns!r}")
            if t_ns < previous:
                what = "the request timestamp" if k == 0 else "the previous response"
                raise TraceFormatError(
                    path, where, f"response_timestamps[{k}]", f"{t_ns} is earlier than {what} ({previous})"
                )
            previous = t_ns
            t_ms = (t_ns - start) / 1e6
            if not isinstance(output, dict):
                raise TraceFormatError(path, where, f"response_outputs[{k}]", "expected an object")
            if "text_output" in output:
                text = output["text_output"]
                if not isinstance(text, str):
                    raise TraceFormatError(path, where, f"response_outputs[{k}].text_output", "expected text")
                triton_pieces.append(Piece(text, t_ms, "content", 1 if text else 0))
                continue
            raw = output.get("response")
            if not isinstance(raw, str):
                raise TraceFormatError(path, where, f"response_outputs[{k}].response", "missing or not text")
            before = len(reader.pieces)
            for ev in parse(raw):
                reader.add_data(ev.data, t_ms, f"{where}.response_outputs[{k}]")
            reader.pieces[before:] = _coalesce(reader.pieces[before:])
        if reader.error:
            return reader.error
        inputs = request.get("request_inputs") if isinstance(request.get("request_inputs"), dict) else {}
        body = _payload(path, where, inputs)
        prompt = prompt_of(body) or (inputs.get("text_input") if isinstance(inputs.get("text_input"), str) else "")
        output_tokens, notes = reader.output_tokens()
        meta = StreamMeta(
            source=self.name,
            model=reader.model or (str(body.get("model", "")) if isinstance(body, dict) else ""),
            prompt=prompt,
            notes=tuple(notes + reader.notes()),
        )
        pieces = triton_pieces or reader.pieces
        return Stream(tuple(pieces), meta=meta, id=f"exp{i}/req{j}", output_tokens=output_tokens)


def _series(path: Path, where: str, request: Any) -> tuple[float, list, list]:
    """A request's start (ns) and its response timestamps and outputs, one output per timestamp."""
    if not isinstance(request, dict):
        raise TraceFormatError(path, where, "", "expected an object")
    start = request.get("timestamp")
    if not _number(start):
        raise TraceFormatError(path, where, "timestamp", f"expected a time in ns, got {start!r}")
    times = request.get("response_timestamps")
    outputs = request.get("response_outputs")
    if not isinstance(times, list):
        raise TraceFormatError(path, where, "response_timestamps", "missing or not a list")
    if not isinstance(outputs, list):
        raise TraceFormatError(path, where, "response_outputs", "missing or not a list")
    if len(times) != len(outputs):
        raise TraceFormatError(
            path,
            where,
            "response_outputs",
            f"{len(outputs)} outputs for {len(times)} response_timestamps",
        )
    return start, times, outputs


def _payload(path: Path, where: str, inputs: dict) -> Any:
    """The request body GenAI-Perf sent (``request_inputs.payload``, JSON text), or None."""
    if not isinstance(inputs.get("payload"), str):
        return None
    try:
        return json.loads(inputs["payload"])
    except json.JSONDecodeError as exc:
        raise TraceFormatError(
            path, where, "request_inputs.payload", f"invalid JSON at column {exc.colno}: {exc.msg}"
        ) from None


IMPORTER = GenAIPerfImporter()
