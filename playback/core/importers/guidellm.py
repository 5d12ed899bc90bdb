"""guidellm benchmark reports: ``guidellm benchmark ... --output-path benchmarks.json``.

A report holds ``benchmarks[]``, each with ``requests.successful/errored/incomplete[]``. Per request guidellm
keeps the start time, first- and last-token times (epoch seconds) and the output token count, not the time of
each chunk: current releases under ``info.timings`` (``request_start``, ``first_token_iteration``,
``last_token_iteration``, ``request_end``) with ``output_tokens``/``output_metrics.total_tokens``; older ones
(0.2-0.3) as ``start_time``, ``first_token_time``, ``last_token_time``, ``end_time``, ``output_tokens``. So
each successful request becomes a ``TimingSeed``; nothing is replayable. The reports may hold only a sample of
each benchmark's requests.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from playback.core.importers.base import SUMMARY_ONLY_NOTE, ImportResult, TimingSeed, TraceFormatError
from playback.core.importers.rederive import count, head_text, load_json, number

MARKERS = (
    '"generative_benchmark"',
    '"generative_request_stats"',
    '"generative_text_response"',
    '"first_token_iteration"',
    '"first_token_time"',
)
# (start, first token, last token, end) in the current and the older report shape.
CURRENT = ("request_start", "first_token_iteration", "last_token_iteration", "request_end")
OLDER = ("start_time", "first_token_time", "last_token_time", "end_time")


def _time(obj: dict[str, Any], key: str, label: str, path: Path, where: str) -> float | None:
    value = obj.get(key)
    return None if value is None else number(value, path, where, label)


def _seed(req: dict[str, Any], seed_id: str, path: Path, where: str, model: str, source: str) -> TimingSeed:
    timings = (req.get("info") or {}).get("timings") if isinstance(req.get("info"), dict) else None
    if isinstance(timings, dict):
        obj, keys, prefix = timings, CURRENT, "info.timings."
    else:
        obj, keys, prefix = req, OLDER, ""
    start, first, last, end = (_time(obj, k, prefix + k, path, where) for k in keys)
    if start is None:
        raise TraceFormatError(path, where, prefix + keys[0], "missing")
    for value, key in ((first, keys[1]), (last, keys[2]), (end, keys[3])):
        if value is not None and value < start:
            raise TraceFormatError(path, where, prefix + key, "is earlier than the request start")
    if first is not None and last is not None and last < first:
        raise TraceFormatError(path, where, prefix + keys[2], "is earlier than the first token")
    out_raw = req.get("output_tokens")
    if out_raw is None and isinstance(req.get("output_metrics"), dict):
        out_raw = req["output_metrics"].get("total_tokens")
    out = None if out_raw is None else count(out_raw, path, where, "output_tokens")
    decode = None if first is None or last is None else last - first
    return TimingSeed(
        id=seed_id,
        ttft_ms=None if first is None else (first - start) * 1000.0,
        tokens_per_s=(out - 1) / decode if out and out > 1 and decode else None,
        output_tokens=out,
        e2e_ms=None if last is None else (last - start) * 1000.0,
        itl_mean_ms=decode * 1000.0 / (out - 1) if out and out > 1 and decode is not None else None,
        model=model,
        source=source,
    )


class GuidellmImporter:
    name = "guidellm"
    description = "guidellm benchmark report JSON (first/last token times: timing seeds only)"

    def sniff(self, head: bytes, path: Path) -> bool:
        text = head_text(head)
        return text.startswith("{") and '"benchmarks"' in text and any(m in text for m in MARKERS)

    def load(self, path: Path) -> ImportResult:
        path = Path(path)
        doc = load_json(path)
        if not isinstance(doc, dict) or not isinstance(doc.get("benchmarks"), list):
            raise TraceFormatError(path, "", "benchmarks", "missing or not a list: not a guidellm report")
        args = doc.get("args") if isinstance(doc.get("args"), dict) else {}
        source = f"{self.name}:{path.name}"
        result = ImportResult(format=self.name, path=str(path))
        skipped = {"errored": 0, "incomplete": 0}
        for b, bench in enumerate(doc["benchmarks"]):
            if not isinstance(bench, dict) or not isinstance(bench.get("requests"), dict):
                raise TraceFormatError(path, f"benchmark {b}", "requests", "missing or not an object")
            worker = bench.get("worker") if isinstance(bench.get("worker"), dict) else {}
            model = str(args.get("model") or worker.get("backend_model") or "")
            requests = bench["requests"]
            for status in skipped:
                if isinstance(requests.get(status), list):
                    skipped[status] += len(requests[status])
            successful = requests.get("successful") or []
            if not isinstance(successful, list):
                raise TraceFormatError(path, f"benchmark {b}", "requests.successful", "must be a list")
            for i, req in enumerate(successful):
                where = f"benchmark {b} request {i}"
                if not isinstance(req, dict):
                    raise TraceFormatError(path, where, "", f"expected an object, got {type(req).__name__}")
                rid = req.get("request_id")
                seed_id = f"{self.name}:{rid}" if rid else f"{self.name}:{b}:{i}"
                result.seeds.append(_seed(req, seed_id, path, where, model, source))
        result.notes.append(
            f"{SUMMARY_ONLY_NOTE} (guidellm records first and last token times per request, not chunk times)"
        )
        for status, n in skipped.items():
            if n:
                result.notes.append(f"skipped {n} {status} requests")
        return result


IMPORTER = GuidellmImporter()
