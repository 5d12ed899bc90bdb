"""The fast path of ``score_traces`` for files of per-request arrays (vLLM ``--save-detailed``, SGLang
``--output-details``): every request's metrics straight from the arrays, with the stream core's definitions
(``playback.core.metrics``), without rebuilding its pieces.

The importer re-derives each request's pieces by tokenising its generated text and spreading the tokens over the
recorded chunks (``playback.core.importers.rederive``); scoring needs none of that text split. TTFT (the first chunk
always carries text), the end time and the decode rate (recorded output tokens) are the stream core's, to
floating-point rounding (tests/analysis/test_score_arrays.py checks every request of the samples), so the
predicted shares are too. Stalls are the recorded chunk gaps over 250 ms: where the importer's re-derivation
leaves a chunk without text (a text of fewer tokens than chunks) the stream core joins the gaps around it, so its
stall total can only be larger. Characters/s assumes the even split the importer makes (the first chunk carries
1/chunks of the text); a model whose level is chars/s is scored through the full importer instead. A file this
path does not take as plainly valid (a value that is not a number, times going backwards, several runs in one
file) goes through the importer, which names the problem.
Pure: no Django.
"""

from __future__ import annotations

import json
from itertools import chain
from pathlib import Path
from typing import Any

import numpy as np

from analysis.stats.scoring import Requests, no_gc
from playback.core.metrics import DEFAULT_STALL_THRESHOLD_MS
from playback.core.textunits import count_chars

ARRAY_FORMATS = ("vllm", "sglang")
REQUIRED = ("ttfts", "itls", "generated_texts", "output_lens")


class NotFast(Exception):
    """This file (or a request in it) goes through the importer instead."""


def _floats(values: list) -> np.ndarray:
    """A list of numbers as floats; ``NotFast`` for anything else (text, null, bool, not finite)."""
    try:
        out = np.asarray(values, dtype=float)
    except (TypeError, ValueError):
        raise NotFast from None
    if out.ndim != 1 or not np.isfinite(out).all() or any(type(v) is bool for v in values[:1]):
        raise NotFast
    return out


def _metrics(ttft_s: np.ndarray, itls: list[list], texts: list[str], out_tokens: np.ndarray
             ) -> dict[str, np.ndarray]:
    """Per request, vectorised over all requests: TTFT and end time (ms), decode rate, chars/s, stall total."""
    counts = np.fromiter(map(len, itls), dtype=np.int64, count=len(itls))
    flat = _floats(list(chain.from_iterable(itls))) if counts.sum() else np.empty(0)
    if (flat < 0).any():
        raise NotFast  # times going backwards: the importer names the request
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
    has = counts > 0
    total_s = np.zeros(len(itls))
    stall_ms = np.zeros(len(itls))
    if flat.size:
        gap_ms = flat * 1000.0
        total_s[has] = np.add.reduceat(flat, starts[has])
        stall_ms[has] = np.add.reduceat(np.where(gap_ms > DEFAULT_STALL_THRESHOLD_MS, gap_ms, 0.0), starts[has])
    ttft_ms = ttft_s * 1000.0
    e2e_ms = (ttft_s + total_s) * 1000.0
    decode_s = (e2e_ms - ttft_ms) / 1000.0
    chars = np.fromiter(map(count_chars, texts), dtype=float, count=len(texts))
    chunks = counts + 1
    with np.errstate(divide="ignore", invalid="ignore"):
        tps = np.where(decode_s > 0, np.maximum(out_tokens - 1, 0) / decode_s, np.nan)
        cps = np.where((decode_s > 0) & (chars >= chunks), (chars - chars / chunks) / decode_s, np.nan)
    return {"ttft_ms": ttft_ms, "tokens_per_s": tps, "chars_per_s": cps, "stall_total_ms": stall_ms}


def load(path: Path, fmt: str, model: dict[str, Any]) -> tuple[Requests, int]:
    """(requests as columns, skipped failed requests) of one array file; ``NotFast`` where the importer must
    decide."""
    preds = model["predictors"]
    level = preds[0]["metric"]
    second = preds[1]["metric"] if len(preds) > 1 else None
    if fmt not in ARRAY_FORMATS or "chars_per_s" in (level, second):
        raise NotFast
    try:
        with path.open(encoding="utf-8-sig") as f, no_gc():
            doc = json.load(f)
    except (UnicodeDecodeError, json.JSONDecodeError):
        raise NotFast from None  # several documents (--append-result), or broken: the importer says which
    if not isinstance(doc, dict) or not all(isinstance(doc.get(k), list) for k in REQUIRED):
        raise NotFast
    ttfts, itls, texts, lens = (doc[k] for k in REQUIRED)
    errors = doc.get("errors")
    n = len(ttfts)
    if any(len(doc[k]) != n for k in REQUIRED) or (errors is not None and
                                                  (not isinstance(errors, list) or len(errors) != n)):
        raise NotFast
    keep, skipped = [], 0
    for i in range(n):
        text = texts[i]
        if errors is not None and errors[i]:
            skipped += 1
            continue
        if text is not None and not isinstance(text, str):
            raise NotFast
        if not text or ttfts[i] == 0:
            skipped += 1
            continue
        if not isinstance(itls[i], list) or isinstance(lens[i], bool) or not isinstance(lens[i], int):
            raise NotFast
        keep.append(i)
    if not keep:
        return Requests.empty(), skipped
    ttft = _floats([ttfts[i] for i in keep])
    m = _metrics(ttft, [itls[i] for i in keep], [texts[i] for i in keep],
                 np.array([lens[i] for i in keep], dtype=float))
    none = np.full(len(keep), np.nan)
    return Requests(ids=[f"{fmt}:{i}" for i in keep], level=m[level], second=m[second] if second else none,
                    ttft_ms=m["ttft_ms"], tokens_per_s=m["tokens_per_s"], chars_per_s=m["chars_per_s"],
                    stall_total_ms=m["stall_total_ms"], prompts=[""] * len(keep)), skipped
