"""AIPerf per-request records: ``aiperf profile --streaming ...`` writes ``profile_export.jsonl``.

Each line is one request: ``metadata`` (ids, ``benchmark_phase``, epoch ns times), ``metrics`` (each a
``{"value", "unit"}`` pair: ``time_to_first_token``, ``inter_chunk_latency`` (a list: gaps between streamed
responses), ``output_sequence_length``/``output_token_count``, ``request_latency``, ``inter_token_latency``)
and ``error``. The records hold no text; AIPerf writes it to ``outputs.json`` (``--export-outputs-json``,
implied by ``--export-level raw``). When that file lies beside the records, each request's pieces are
re-derived from its ``response_text``; records without text become ``TimingSeed`` rows. Model and tokenizer
come from ``profile_export_aiperf.json`` beside it when present.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from playback.core.importers.base import ImportResult, TimingSeed, TraceFormatError
from playback.core.importers.rederive import (
    chunk_times_ms,
    count,
    finite_times,
    first_of,
    guess_language,
    head_text,
    load_json,
    load_json_lines,
    number,
    rederive,
    tokenizer_for,
)
from playback.core.stream import Stream, StreamMeta

UNIT_MS = {"ns": 1e-6, "us": 1e-3, "µs": 1e-3, "μs": 1e-3, "ms": 1.0, "s": 1000.0, "sec": 1000.0}


def _metric(metrics: dict[str, Any], key: str, path: Path, where: str) -> tuple[Any, float | None]:
    """A metric's raw ``value`` (``None`` when absent) and its unit's factor to ms (``None``: not time)."""
    entry = metrics.get(key)
    if entry is None:
        return None, 1.0
    if not isinstance(entry, dict) or "value" not in entry:
        raise TraceFormatError(path, where, f"metrics.{key}", 'must be an object {"value": ..., "unit": ...}')
    unit = entry.get("unit", "")
    return entry["value"], UNIT_MS.get(str(unit))


def _ms(metrics: dict[str, Any], key: str, path: Path, where: str) -> float | None:
    value, factor = _metric(metrics, key, path, where)
    if value is None:
        return None
    if factor is None:
        raise TraceFormatError(path, where, f"metrics.{key}.unit", f"unknown time unit {metrics[key].get('unit')!r}")
    return number(value, path, where, f"metrics.{key}") * factor


def _gaps_ms(metrics: dict[str, Any], path: Path, where: str) -> list[float]:
    value, factor = _metric(metrics, "inter_chunk_latency", path, where)
    if value is None:
        return []
    if factor is None:
        raise TraceFormatError(path, where, "metrics.inter_chunk_latency.unit", "unknown time unit")
    if not isinstance(value, list):
        raise TraceFormatError(path, where, "metrics.inter_chunk_latency", "value must be a list of numbers")
    return [number(v, path, where, f"metrics.inter_chunk_latency[{i}]") * factor for i, v in enumerate(value)]


def _tokens(metrics: dict[str, Any], path: Path, where: str) -> int | None:
    # output_sequence_length counts reasoning + answer tokens, as response_text holds both.
    for key in ("output_sequence_length", "output_token_count"):
        value, _ = _metric(metrics, key, path, where)
        if value is not None:
            return count(value, path, where, f"metrics.{key}")
    return None


def _key(obj: dict[str, Any], name: str, path: Path, where: str, default: Any = None) -> Any:
    """A request id, session number or turn index: a string or a number (they key the texts), else refused."""
    value = obj.get(name, default)
    if value is not None and not isinstance(value, str | int | float):
        raise TraceFormatError(path, where, name, f"must be a string or a number, got {type(value).__name__}")
    return value


def _outputs(path: Path) -> tuple[dict[Any, str], str]:
    """Response texts from the ``outputs.json`` beside ``path``, keyed by request id and (session, turn)."""
    for candidate in (path.parent / f"{path.stem}_outputs.json", path.parent / "outputs.json"):
        if candidate.is_file():
            break
    else:
        return {}, ""
    doc = load_json(candidate)
    data = doc.get("data") if isinstance(doc, dict) else None
    if not isinstance(data, list):
        raise TraceFormatError(candidate, "", "data", "missing or not a list")
    texts: dict[Any, str] = {}
    for i, entry in enumerate(data):
        if not isinstance(entry, dict):
            raise TraceFormatError(candidate, f"data[{i}]", "", "must be an object")
        text = entry.get("response_text")
        if text is None:
            continue
        if not isinstance(text, str):
            raise TraceFormatError(candidate, f"data[{i}]", "response_text", "must be a string or null")
        where = f"data[{i}]"
        rid = _key(entry, "x_request_id", candidate, where)
        if rid:
            texts[rid] = text
        texts[(_key(entry, "session_num", candidate, where), _key(entry, "turn_index", candidate, where, 0))] = text
    return texts, candidate.name


def _run_config(path: Path) -> tuple[str, str]:
    """Model and tokenizer names from ``profile_export_aiperf.json`` beside ``path`` (best effort)."""
    summary = path.parent / "profile_export_aiperf.json"
    try:
        doc = json.loads(summary.read_bytes())
        config = doc["input_config"]
        models = config["endpoint"]["model_names"]
        model = str(models[0]) if models else ""
        tokenizer = (config.get("tokenizer") or {}).get("name") or ""
        return model, str(tokenizer)
    except (OSError, ValueError, KeyError, TypeError, IndexError, AttributeError):
        return "", ""


class AiperfImporter:
    name = "aiperf"
    description = "AIPerf profile_export.jsonl per-request records (+ outputs.json for the response text)"

    def sniff(self, head: bytes, path: Path) -> bool:
        text = head_text(head)
        if not text.startswith("{"):
            return False
        first = text.split("\n", 1)[0]
        try:
            rec = json.loads(first)
        except ValueError:  # first line longer than the head: judge by its keys
            return '"metadata"' in first and '"metrics"' in first and '"x_request_id"' in first
        return isinstance(rec, dict) and isinstance(rec.get("metadata"), dict) and "metrics" in rec

    def load(self, path: Path) -> ImportResult:
        path = Path(path)
        records = load_json_lines(path)
        texts, outputs_name = _outputs(path)
        model, tokenizer_name = _run_config(path)
        tok, tok_notes = tokenizer_for(tokenizer_name or model)
        source = f"{self.name}:{path.name}"
        result = ImportResult(format=self.name, path=str(path))
        failed: list[int] = []
        warmup: list[int] = []
        no_text: list[int] = []
        for n, rec in records:
            where = f"line {n}"
            if not isinstance(rec, dict):
                raise TraceFormatError(path, where, "", f"expected a JSON object, got {type(rec).__name__}")
            meta = rec.get("metadata") or {}
            if not isinstance(meta, dict):
                raise TraceFormatError(path, where, "metadata", "must be an object")
            if rec.get("error"):
                failed.append(n)
                continue
            if meta.get("benchmark_phase") == "warmup":
                warmup.append(n)
                continue
            metrics = rec.get("metrics")
            if not isinstance(metrics, dict):
                raise TraceFormatError(path, where, "metrics", "missing or not an object")
            ttft = _ms(metrics, "time_to_first_token", path, where)
            if ttft is None:
                raise TraceFormatError(path, where, "metrics.time_to_first_token", "missing (not a streaming run?)")
            gaps = _gaps_ms(metrics, path, where)
            out = _tokens(metrics, path, where)
            rid = _key(meta, "x_request_id", path, where)
            session, turn = _key(meta, "session_num", path, where), _key(meta, "turn_index", path, where, 0)
            sid = f"{self.name}:{rid}" if rid else f"{self.name}:{session if session is not None else n}-{turn}"
            text = texts.get(rid) if rid else None
            if text is None:
                text = texts.get((session, turn))
            times = finite_times(chunk_times_ms(ttft, gaps, scale_ms=1.0), path, where, "metrics.inter_chunk_latency")
            if not text:
                no_text.append(n)
                result.seeds.append(_seed(sid, times, out, metrics, path, where, model, source))
                continue
            pieces, extra = rederive(text, times, out, tok)
            notes = (
                *tok_notes,
                f"pieces re-derived from response_text ({outputs_name}) with tokenizer {tok.name} "
                f"over {len(times)} recorded chunks",
                *extra,
            )
            stream_meta = StreamMeta(
                source=source, model=model, tokenizer=tok.name, language=guess_language(text), notes=notes
            )
            result.streams.append(Stream(pieces=tuple(pieces), meta=stream_meta, id=sid, output_tokens=out))
        if failed:
            result.notes.append(f"skipped {len(failed)} requests with a recorded error: lines {first_of(failed)}")
        if warmup:
            result.notes.append(f"skipped {len(warmup)} warmup requests: lines {first_of(warmup)}")
        if no_text:
            where_text = f"not in {outputs_name}" if outputs_name else "no outputs.json beside the records"
            result.notes.append(
                f"{len(no_text)} requests have no response text ({where_text}): timing seeds only, "
                f"not replayable (lines {first_of(no_text)}); run aiperf with --export-outputs-json to replay"
            )
        if result.streams and tok_notes:
            result.notes.extend(tok_notes)
        return result


def _seed(
    sid: str,
    times: list[float],
    out: int | None,
    metrics: dict[str, Any],
    path: Path,
    where: str,
    model: str,
    source: str,
) -> TimingSeed:
    decode_ms = times[-1] - times[0]
    rate = (out - 1) / (decode_ms / 1000.0) if out and out > 1 and decode_ms > 0 else None
    itl = _ms(metrics, "inter_token_latency", path, where)
    return TimingSeed(
        id=sid,
        ttft_ms=times[0],
        tokens_per_s=rate,
        output_tokens=out,
        e2e_ms=times[-1],
        itl_mean_ms=itl,
        model=model,
        source=source,
    )


IMPORTER = AiperfImporter()
