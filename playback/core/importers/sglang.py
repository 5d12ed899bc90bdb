"""SGLang serving-benchmark results: ``python -m sglang.bench_serving --output-details --output-file X``.

The file is JSON Lines, one line per run (bench_serving appends). With ``--output-details`` a run carries the
same per-request arrays as vLLM's detailed result (``ttfts`` and ``itls`` in s, per streamed chunk,
``generated_texts``, ``output_lens``, ``input_lens``, ``errors``), at the top level or, in some versions,
under ``details``; pieces are re-derived from the generated text. Without it a run has averages only and
becomes a ``TimingSeed``. Request numbers in errors and notes are array indices.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from playback.core.importers.base import ImportResult
from playback.core.importers.rederive import head_text
from playback.core.importers.vllm import has_arrays, load_runs

SGLANG_MARKERS = ('"sharegpt_output_len"', '"random_range_ratio"', '"mean_e2e_latency_ms"')


def _model(doc: dict[str, Any]) -> str:
    for key in ("model_id", "model", "model_path"):
        if isinstance(doc.get(key), str) and doc[key]:
            return doc[key]
    info = doc.get("server_info")
    if isinstance(info, dict):
        for key in ("model_path", "served_model_name", "tokenizer_path"):
            if isinstance(info.get(key), str) and info[key]:
                return info[key]
    return ""


def _arrays(doc: dict[str, Any]) -> dict[str, Any] | None:
    """The run's per-request arrays: at the top level, or (some versions) under ``details``; None without them."""
    details = doc.get("details")
    arrays = details if isinstance(details, dict) and has_arrays(details) else doc
    return arrays if has_arrays(arrays) else None


class SglangImporter:
    name = "sglang"
    description = "SGLang `bench_serving --output-details` result JSONL"

    def sniff(self, head: bytes, path: Path) -> bool:
        text = head_text(head)
        if not text.startswith("{") or '"experiments"' in text or '"pacelab_trace"' in text:
            return False
        has_timing = '"ttfts"' in text or '"mean_ttft_ms"' in text
        return has_timing and any(m in text for m in SGLANG_MARKERS)

    def load(self, path: Path) -> ImportResult:
        # JSON Lines: one run per line
        return load_runs(path, self.name, model_of=_model, arrays_of=_arrays,
                         tokenizer_of=lambda doc, model: str(doc.get("tokenizer_id") or doc.get("tokenizer") or model),
                         summary_why="written without --output-details: no per-request ttfts/itls/generated_texts")


IMPORTER = SglangImporter()
