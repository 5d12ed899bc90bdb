"""LLMPerf per-request results: ``token_benchmark_ray.py --results-dir D`` writes
``<model>_<in>_<out>_individual_responses.json`` (a JSON list, one object per request).

Each request records only averages and totals: ``ttft_s``, ``inter_token_latency_s`` (mean, s),
``end_to_end_latency_s``, ``request_output_throughput_token_per_s``, ``number_output_tokens``,
``number_input_tokens``, ``error_code``/``error_msg``. No chunk times and no text, so nothing can be replayed:
each request becomes a ``TimingSeed``. The model name comes from the ``*_summary.json`` beside it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from playback.core.importers.base import SUMMARY_ONLY_NOTE, ImportResult, TimingSeed, TraceFormatError
from playback.core.importers.rederive import count, first_of, head_text, load_json, number

SUFFIX = "_individual_responses.json"


def _model(path: Path) -> str:
    if not path.name.endswith(SUFFIX):
        return ""
    try:
        doc = json.loads((path.parent / (path.name[: -len(SUFFIX)] + "_summary.json")).read_bytes())
        return str(doc.get("model") or "")
    except (OSError, ValueError, AttributeError):
        return ""


def _optional(rec: dict[str, Any], key: str, path: Path, where: str) -> float | None:
    value = rec.get(key)
    return None if value is None else number(value, path, where, key)


class LlmperfImporter:
    name = "llmperf"
    description = "LLMPerf *_individual_responses.json (per-request averages: timing seeds only)"

    def sniff(self, head: bytes, path: Path) -> bool:
        text = head_text(head)
        return (
            text.startswith("[")
            and '"ttft_s"' in text
            and ('"inter_token_latency_s"' in text or '"number_output_tokens"' in text)
        )

    def load(self, path: Path) -> ImportResult:
        path = Path(path)
        doc = load_json(path)
        if not isinstance(doc, list):
            raise TraceFormatError(path, "", "", f"expected a JSON list of requests, got {type(doc).__name__}")
        model = _model(path)
        source = f"{self.name}:{path.name}"
        result = ImportResult(format=self.name, path=str(path))
        failed: list[int] = []
        for i, rec in enumerate(doc):
            where = f"request {i}"
            if not isinstance(rec, dict):
                raise TraceFormatError(path, where, "", f"expected an object, got {type(rec).__name__}")
            if rec.get("error_code") is not None or rec.get("error_msg"):
                failed.append(i)
                continue
            if "ttft_s" not in rec:
                raise TraceFormatError(path, where, "ttft_s", "missing")
            ttft = number(rec["ttft_s"], path, where, "ttft_s") * 1000.0
            itl = _optional(rec, "inter_token_latency_s", path, where)
            e2e = _optional(rec, "end_to_end_latency_s", path, where)
            if e2e is not None and e2e * 1000.0 < ttft:
                raise TraceFormatError(path, where, "end_to_end_latency_s", "is shorter than ttft_s")
            out_raw = rec.get("number_output_tokens")
            out = None if out_raw is None else count(out_raw, path, where, "number_output_tokens")
            _optional(rec, "request_output_throughput_token_per_s", path, where)  # checked, not used
            rate = None
            if out and out > 1 and e2e is not None and e2e * 1000.0 > ttft:
                rate = (out - 1) / (e2e - ttft / 1000.0)
            result.seeds.append(
                TimingSeed(
                    id=f"{self.name}:{i}",
                    ttft_ms=ttft,
                    tokens_per_s=rate,
                    output_tokens=out,
                    e2e_ms=None if e2e is None else e2e * 1000.0,
                    itl_mean_ms=None if itl is None else itl * 1000.0,
                    model=model,
                    source=source,
                )
            )
        result.notes.append(f"{SUMMARY_ONLY_NOTE} (LLMPerf keeps per-request averages, no chunk times or text)")
        if failed:
            result.notes.append(f"skipped {len(failed)} requests with a recorded error: {first_of(failed)}")
        return result


IMPORTER = LlmperfImporter()
