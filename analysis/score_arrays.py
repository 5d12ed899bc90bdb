"""The fast path of ``score_traces`` for files of per-request arrays (vLLM ``--save-detailed``, SGLang
``--output-details``): every request's metrics straight from the arrays, with the stream core's definitions
(``playback.metrics``), without rebuilding its pieces.

The importer re-derives each request's pieces by tokenising its generated text and spreading the tokens over the
recorded chunks (``playback.importers.rederive``); scoring needs none of that text split. TTFT (the first chunk
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
import math
from pathlib import Path
from typing import Any

import numpy as np

from analysis.scoring import Request
from playback.metrics import DEFAULT_STALL_THRESHOLD_MS
from playback.textunits import count_chars

ARRAY_FORMATS = ("vllm", "sglang")
REQUIRED = ("ttfts", "itls", "generated_texts", "output_lens")


class NotFast(Exception):
    """This file (or a request in it) goes through the importer instead."""


def _num(v: Any) -> float:
    if isinstance(v, bool) or not isinstance(v, int | float) or not math.isfinite(v):
        raise NotFast
    return float(v)


def _request(rid: str, ttft_s: float, gaps_s: list, text: str, out_tokens: int, second: str | None,
             level: str, prompt: str = "") -> Request:
    gaps = np.fromiter(map(_num, gaps_s), dtype=float, count=len(gaps_s)) if gaps_s else np.empty(0)
    if (gaps < 0).any() or out_tokens < 0:
        raise NotFast  # times going backwards: the importer names the request
    # chunk times as the importer computes them (a running sum in seconds, then ms), so gaps match to the bit
    times = (ttft_s + np.cumsum(gaps)) * 1000.0 if len(gaps) else np.empty(0)
    t_all = np.concatenate([[ttft_s * 1000.0], times])
    itl = np.diff(t_all)
    ttft_ms, e2e = float(t_all[0]), float(t_all[-1])
    tps = cps = None
    if e2e > ttft_ms:
        decode_s = (e2e - ttft_ms) / 1000.0
        tps = max(out_tokens - 1, 0) / decode_s
        chars = count_chars(text)
        chunks = len(t_all)
        cps = (chars - chars / chunks) / decode_s if chars >= chunks else None
    stalls = itl[itl > DEFAULT_STALL_THRESHOLD_MS]
    values = {"tokens_per_s": tps, "chars_per_s": cps, "ttft_ms": ttft_ms}
    return Request(id=rid, level=values[level], second=values[second] if second else None, ttft_ms=ttft_ms,
                   tokens_per_s=tps, chars_per_s=cps, stall_total_ms=math.fsum(stalls.tolist()), prompt=prompt)


def load(path: Path, fmt: str, model: dict[str, Any]) -> tuple[list[Request], int]:
    """(requests, skipped failed requests) of one array file; ``NotFast`` where the importer must decide."""
    preds = model["predictors"]
    level = preds[0]["metric"]
    second = preds[1]["metric"] if len(preds) > 1 else None
    if fmt not in ARRAY_FORMATS or "chars_per_s" in (level, second):
        raise NotFast
    try:
        doc = json.loads(path.read_bytes().decode("utf-8-sig"))
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
    out, skipped = [], 0
    for i in range(n):
        text = texts[i]
        if errors is not None and errors[i]:
            skipped += 1
            continue
        if text is not None and not isinstance(text, str):
            raise NotFast
        ttft = _num(ttfts[i])
        if not text or ttft == 0:
            skipped += 1
            continue
        out_tokens = lens[i]
        if isinstance(out_tokens, bool) or not isinstance(out_tokens, int) or not isinstance(itls[i], list):
            raise NotFast
        out.append(_request(f"{fmt}:{i}", ttft, itls[i], text, out_tokens, second, level))
    return out, skipped
