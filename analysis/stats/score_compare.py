"""Which of two serving runs feels faster, by how much and how sure: two scores under one model.

Both runs are scored with the same draws of the model (``analysis.stats.scoring.score(..., keep_draws=True)``, the
same seed), so the model's uncertainty is shared, as it is in truth. Where the prompts match (both files record
prompts and some are the same), requests are paired by prompt (in order of occurrence within each prompt) and
the pairs are resampled; otherwise each run's requests are resampled on their own. Each of the model's draws gets
one resample, so the interval and the probability carry both the model's uncertainty and the requests' sampling.
The measure is the difference B − A in the mean share of the population accepting a request, and in the share
of requests acceptable to the population share asked for. Pure: no Django.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

SURE = 0.95


def _pairs(prompts_a: list[str], prompts_b: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """Index pairs (a, b) of requests with the same non-empty prompt, k-th occurrence with k-th occurrence."""
    seen: dict[str, list[int]] = {}
    for j, p in enumerate(prompts_b):
        if p:
            seen.setdefault(p, []).append(j)
    used: dict[str, int] = {}
    ia, ib = [], []
    for i, p in enumerate(prompts_a):
        if p and p in seen and used.get(p, 0) < len(seen[p]):
            ia.append(i)
            ib.append(seen[p][used.get(p, 0)])
            used[p] = used.get(p, 0) + 1
    return np.array(ia, dtype=int), np.array(ib, dtype=int)


def _summary(values: np.ndarray, point: float) -> dict[str, Any]:
    lo, hi = np.percentile(values, [2.5, 97.5])
    return {"difference": float(point), "interval": [float(lo), float(hi)],
            "p_b_better": float(np.mean(values > 0)), "p_a_better": float(np.mean(values < 0))}


def compare(a: Mapping[str, Any], b: Mapping[str, Any], *, seed: int = 0, min_pairs: int = 2) -> dict[str, Any]:
    """The comparison dict (keys in docs/scoring.md, "score_traces --vs"); ``a`` and ``b`` from ``score`` with
    ``keep_draws=True``, the same model, draws and seed."""
    da, db = np.asarray(a["_draws"], dtype=float), np.asarray(b["_draws"], dtype=float)
    if da.shape[1] == 0 or db.shape[1] == 0:
        raise ValueError("a run with no scored request cannot be compared")
    target = float(a["population_share"])
    pa = np.array([r["share"] for r in a["requests"]])
    pb = np.array([r["share"] for r in b["requests"]])
    ia, ib = _pairs(list(a["_prompts"]), list(b["_prompts"]))
    rng = np.random.default_rng(seed)
    draws = da.shape[0]
    paired = len(ia) >= min_pairs
    mean_diff = np.empty(draws)
    acc_diff = np.empty(draws)
    if paired:
        pa_, pb_ = pa[ia], pb[ib]
        point_mean = float(np.mean(pb_ - pa_))
        point_acc = float(np.mean(pb_ >= target) - np.mean(pa_ >= target))
        for d in range(draws):
            k = rng.integers(0, len(ia), len(ia))
            sa, sb = da[d, ia[k]], db[d, ib[k]]
            mean_diff[d] = np.mean(sb - sa)
            acc_diff[d] = np.mean(sb >= target) - np.mean(sa >= target)
    else:
        point_mean = float(pb.mean() - pa.mean())
        point_acc = float(np.mean(pb >= target) - np.mean(pa >= target))
        for d in range(draws):
            ka = rng.integers(0, da.shape[1], da.shape[1])
            kb = rng.integers(0, db.shape[1], db.shape[1])
            sa, sb = da[d, ka], db[d, kb]
            mean_diff[d] = sb.mean() - sa.mean()
            acc_diff[d] = np.mean(sb >= target) - np.mean(sa >= target)
    mean = _summary(mean_diff, point_mean)
    if mean["p_b_better"] >= SURE:
        verdict = "B"
    elif mean["p_a_better"] >= SURE:
        verdict = "A"
    else:
        verdict = "undecided"
    return {
        "method": "paired" if paired else "resampled",
        "n_pairs": int(len(ia)) if paired else 0,
        "n_a": int(da.shape[1]), "n_b": int(db.shape[1]),
        "population_share": target,
        "mean_share": mean,
        "acceptable": _summary(acc_diff, point_acc),
        "faster": verdict,
        "sure_at": SURE,
    }
