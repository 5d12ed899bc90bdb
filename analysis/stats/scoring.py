"""Score serving requests with a perception model: the share of the population that would accept each one.

Pure (no Django). Each request's metrics come from the stream core (``playback.core.metrics``); the model is a
validated model file (``analysis.stats.perception_model``). A request's share is Φ(±(x − μ(t))/σ(t)) on the model's
fitting axis, x its level metric (decode rate) and t its second predictor (TTFT), μ and log σ interpolated
between the model's anchors. The interval is the 2.5 %–97.5 % range over ``draws`` draws of the anchors' μ and
log σ: the model file's joint draws (a participant bootstrap), or independent normals for a model without them
(the model's uncertainty; the request's own metrics are taken as measured). With joint draws the request's share
is their median (the run's point estimate can sit on a boundary, σ on the grid's floor, where it would lie outside
its own interval); without them, the share at the anchors' estimates. The same
draws give the intervals of the summary numbers, so those intervals carry the model's uncertainty, which is
shared between requests (and between two runs compared: ``analysis.stats.score_compare``).

Requests whose metrics lie outside the range the study tested are scored by extrapolation and counted; requests
without a level (one content piece: no decode rate) are not scored and counted.
"""

from __future__ import annotations

import gc
import math
from collections.abc import Iterable, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import special

from playback.core.metrics import StreamMetrics

CHUNK = 2048  # requests per block of draws: bounds memory at draws × CHUNK floats per array
WORST = 5
HIST_BINS = 10


@dataclass(slots=True)
class Request:
    """What scoring needs of one request (from ``playback.core.metrics``). Not frozen: a frozen dataclass's __init__
    costs a third of scoring a 10,000-request file."""

    id: str
    level: float | None  # the model's level metric (tokens/s)
    second: float | None  # the second predictor (TTFT ms), None when the model has one predictor
    ttft_ms: float | None
    tokens_per_s: float | None
    chars_per_s: float | None
    stall_total_ms: float
    prompt: str = ""


_COLUMNS = ("level", "second", "ttft_ms", "tokens_per_s", "chars_per_s", "stall_total_ms")


@dataclass(slots=True)
class Requests:
    """Requests as columns, one float array per field (NaN where a value is missing) with the ids and prompts as
    lists: what the fast path builds and ``score`` reads, without a Python object per request (building 10,000
    ``Request`` objects cost as much as the scoring). Iterating yields ``Request`` objects, for reading."""

    ids: list[str]
    level: np.ndarray
    second: np.ndarray
    ttft_ms: np.ndarray
    tokens_per_s: np.ndarray
    chars_per_s: np.ndarray
    stall_total_ms: np.ndarray
    prompts: list[str]

    def __len__(self) -> int:
        return len(self.ids)

    def __iter__(self):
        cols = [[None if v != v else v for v in getattr(self, c).tolist()] for c in _COLUMNS]
        for i, rid in enumerate(self.ids):
            level, second, ttft, tps, cps, stall = (c[i] for c in cols)
            yield Request(id=rid, level=level, second=second, ttft_ms=ttft, tokens_per_s=tps, chars_per_s=cps,
                          stall_total_ms=0.0 if stall is None else stall, prompt=self.prompts[i])

    @classmethod
    def empty(cls) -> Requests:
        return cls([], *(np.empty(0) for _ in _COLUMNS), [])

    @classmethod
    def of(cls, requests: Sequence[Request] | Requests) -> Requests:
        if isinstance(requests, Requests):
            return requests
        cols = [np.array([getattr(r, c) for r in requests], dtype=float).reshape(-1) for c in _COLUMNS]
        return cls([r.id for r in requests], *cols, [r.prompt for r in requests])

    @classmethod
    def concat(cls, parts: Sequence[Requests]) -> Requests:
        if len(parts) == 1:
            return parts[0]
        if not parts:
            return cls.empty()
        return cls([i for p in parts for i in p.ids], *(np.concatenate([getattr(p, c) for p in parts])
                                                         for c in _COLUMNS), [t for p in parts for t in p.prompts])

    def take(self, index: np.ndarray) -> Requests:
        return Requests([self.ids[i] for i in index.tolist()], *(getattr(self, c)[index] for c in _COLUMNS),
                        [self.prompts[i] for i in index.tolist()])


def requests_from_metrics(model: Mapping[str, Any], metrics: Iterable[StreamMetrics],
                          prompts: Iterable[str] | None = None) -> list[Request]:
    """The requests' predictors as the model names them (its ``predictors[].metric``)."""
    preds = model["predictors"]
    first = preds[0]["metric"]
    second = preds[1]["metric"] if len(preds) > 1 else None
    prompts_list = list(prompts) if prompts is not None else None
    out = []
    for i, m in enumerate(metrics):
        out.append(Request(id=m.id, level=getattr(m, first), second=getattr(m, second) if second else None,
                           ttft_ms=m.ttft_ms, tokens_per_s=m.tokens_per_s, chars_per_s=m.chars_per_s,
                           stall_total_ms=m.stall_total_ms, prompt=prompts_list[i] if prompts_list else ""))
    return out


class Surface:
    """The model's population parameters: at its point estimate and as draws, evaluated at any request."""

    def __init__(self, model: Mapping[str, Any], draws: int = 200, seed: int = 0) -> None:
        pop = model["population"]
        self.model = model
        self.log = model["predictors"][0]["axis"] == "log"
        self.sign = -1.0 if model["predictors"][0].get("direction") == "falling" else 1.0
        anchors = pop["anchors"]
        self.at = np.array([a["at"] if a["at"] is not None else 0.0 for a in anchors], dtype=float)
        mu = np.array([a["mu"] for a in anchors], dtype=float)
        ls = np.array([a["log_sigma"] for a in anchors], dtype=float)
        rng = np.random.default_rng(seed)
        self.draws = draws
        # row 0 is the point estimate; rows 1.. the draws: the model's joint draws (all of them, in order, when as
        # many are asked as it holds; else resampled), or, for a model without them, independent normals
        joint = pop.get("draws")
        self.joint = bool(joint)
        if joint:
            d_mu, d_ls = np.asarray(joint["mu"], dtype=float), np.asarray(joint["log_sigma"], dtype=float)
            held = len(d_mu)
            pick = np.arange(draws) if draws == held else rng.choice(held, draws, replace=draws > held)
            self.mu, self.log_sigma = np.vstack([mu, d_mu[pick]]), np.vstack([ls, d_ls[pick]])
        else:
            self.mu = np.vstack([mu, mu + rng.standard_normal((draws, len(mu))) * [a["mu_se"] for a in anchors]])
            self.log_sigma = np.vstack([ls, ls + rng.standard_normal((draws, len(ls))) *
                                        [a["log_sigma_se"] for a in anchors]])
        self.tested = [tuple(p["tested"]) for p in model["predictors"]]

    def _weights(self, second: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Segment index and fraction along it per request (linear, extrapolated along the end segments)."""
        if len(self.at) == 1:
            return np.zeros(len(second), dtype=int), np.zeros(len(second))
        i = np.clip(np.searchsorted(self.at, second) - 1, 0, len(self.at) - 2)
        frac = (second - self.at[i]) / (self.at[i + 1] - self.at[i])
        return i, frac

    def _params(self, rows: slice, second: np.ndarray, dtype) -> tuple[np.ndarray, np.ndarray]:
        """μ and 1/σ of ``rows`` of the parameters at each request's second predictor, as ``dtype`` arrays."""
        i, f = self._weights(second)
        j = np.minimum(i + 1, len(self.at) - 1)
        mu, ls = self.mu[rows].astype(dtype), self.log_sigma[rows].astype(dtype)
        f = f.astype(dtype)[None, :]
        if len(self.at) == 2 or len(self.at) == 1:  # one segment: a broadcast, no gather per request
            m = mu[:, :1] + (mu[:, -1:] - mu[:, :1]) * f
            inv = np.exp(-(ls[:, :1] + (ls[:, -1:] - ls[:, :1]) * f))
        else:
            m = mu[:, i] + (mu[:, j] - mu[:, i]) * f
            inv = np.exp(-(ls[:, i] + (ls[:, j] - ls[:, i]) * f))
        return m, inv

    def point(self, level: np.ndarray, second: np.ndarray) -> np.ndarray:
        """(n,) shares accepting at the point estimate (double precision)."""
        x = np.log(level) if self.log else np.asarray(level, dtype=float)
        m, inv = self._params(slice(0, 1), second, np.float64)
        return special.ndtr(self.sign * (x[None, :] - m) * inv)[0]

    def drawn(self, level: np.ndarray, second: np.ndarray) -> np.ndarray:
        """(draws, n) shares accepting over the draws, in single precision (shares to 1e-7: ample for percentiles
        over 200 draws, and a quarter of the time of double precision)."""
        x = (np.log(level) if self.log else np.asarray(level, dtype=float)).astype(np.float32)
        m, inv = self._params(slice(1, None), second, np.float32)
        z = x[None, :] - m
        z *= inv
        if self.sign < 0:
            np.negative(z, out=z)
        return special.ndtr(z)

    def shares(self, level: np.ndarray, second: np.ndarray) -> np.ndarray:
        """(1 + draws, n) shares accepting: row 0 at the point estimate. ``level`` > 0 on a log axis."""
        return np.vstack([self.point(level, second), self.drawn(level, second)])

    def outside(self, level: np.ndarray, second: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        lo, hi = self.tested[0]
        out_level = (level < lo) | (level > hi)
        if len(self.tested) > 1:
            lo2, hi2 = self.tested[1]
            return out_level, (second < lo2) | (second > hi2)
        return out_level, np.zeros(len(level), dtype=bool)


def _interval(values: np.ndarray) -> list[float]:
    lo, hi = np.percentile(values, [2.5, 97.5])
    return [float(lo), float(hi)]


def _why(surface: Surface, level: float, second: float | None, share: float, target: float) -> dict[str, Any]:
    """Which predictor holds a request back, on the fitting axis: TTFT's part is how far its TTFT raises the
    population's median threshold above the threshold at the best TTFT tested; the rate's part is how far the
    request's rate lies below that best-TTFT threshold. The larger part names the cause ("none" when the request
    is acceptable to the population share asked for, or neither part is positive)."""
    sign = surface.sign
    x = math.log(level) if surface.log else float(level)
    best_t = surface.tested[1][0] if len(surface.tested) > 1 else 0.0
    i, f = surface._weights(np.array([best_t, second or 0.0]))
    mu = surface.mu[0, i] * (1 - f) + surface.mu[0, np.minimum(i + 1, len(surface.at) - 1)] * f
    parts = {"rate": float(sign * (mu[0] - x))}
    if len(surface.tested) > 1 and second is not None:
        parts["ttft"] = float(sign * (mu[1] - mu[0]))
    cause = max(parts, key=parts.get)
    if share >= target or parts[cause] <= 0:
        cause = "none"
    return {"cause": cause, "penalty": {k: round(v, 4) for k, v in parts.items()}}


def _order_stats(drawn: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The 2.5, 50 and 97.5 % points over the draws (axis 0) per request, as ``np.percentile``'s linear method
    gives them: one sort of each request's draws, contiguous (numpy's vectorised sort of floats is a tenth of the
    time of a partition along the strided axis)."""
    n = drawn.shape[0]
    ordered = np.sort(np.ascontiguousarray(drawn.T), axis=1)
    pos = np.array([0.025, 0.5, 0.975]) * (n - 1)
    lo = np.floor(pos).astype(int)
    hi = np.minimum(lo + 1, n - 1)
    out = []
    for a, b, frac in zip(lo, hi, pos - lo):
        va, vb = ordered[:, a].astype(float), ordered[:, b].astype(float)
        out.append(va + (vb - va) * frac)
    return out[0], out[1], out[2]


@contextmanager
def no_gc():
    """The cyclic garbage collector paused while many acyclic containers are built (a file's parsed JSON, the
    score's rows): 10,000 requests' lists and dicts trigger collections that walk every object of the process
    (the tokenizers' vocabularies, 300 MB, in ``score_traces``), half the time of scoring a file."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def _rows(req: Requests, point: np.ndarray, lows: np.ndarray, highs: np.ndarray, extrapolated: np.ndarray
          ) -> list[dict[str, Any]]:
    def col(a: np.ndarray) -> list:
        values = a.tolist()
        return [None if v != v else v for v in values] if np.isnan(a).any() else values

    keys = ("id", "share", "low", "high", "ttft_ms", "tokens_per_s", "chars_per_s", "stall_total_ms", "extrapolated")
    with no_gc():
        return [dict(zip(keys, values)) for values in zip(
            req.ids, point.tolist(), lows.tolist(), highs.tolist(), col(req.ttft_ms), col(req.tokens_per_s),
            col(req.chars_per_s), req.stall_total_ms.tolist(), extrapolated.tolist())]


def score(model: Mapping[str, Any], requests: Sequence[Request] | Requests, *, population_share: float | None = None,
          draws: int = 200, seed: int = 0, worst: int = WORST, keep_draws: bool = False) -> dict[str, Any]:
    """The JSON-ready score of a run (keys in docs/scoring.md, "score_traces --json"). ``keep_draws`` adds the
    per-request draws (``_draws``, not JSON) for a comparison. Vectorised over the requests: no Python object per
    request but the output rows."""
    target = float(model["population"]["share"] if population_share is None else population_share)
    if not 0 < target < 1:
        raise ValueError(f"--population-share: must lie strictly between 0 and 1, got {target:g}")
    surface = Surface(model, draws=draws, seed=seed)
    cols = Requests.of(requests)
    with np.errstate(invalid="ignore"):
        ok = np.isfinite(cols.level) & ((cols.level > 0) | (not surface.log))
    if len(surface.tested) > 1:
        ok &= np.isfinite(cols.second)
    usable = cols if ok.all() else cols.take(np.flatnonzero(ok))
    unscored = [cols.ids[i] for i in np.flatnonzero(~ok)[:20].tolist()]
    n = len(usable)
    level = usable.level
    second = np.nan_to_num(usable.second, nan=0.0)
    point = np.empty(n)
    lows, highs = np.empty(n), np.empty(n)
    accepted_per_draw = np.zeros(draws)
    mean_per_draw = np.zeros(draws)
    kept = [] if keep_draws else None
    for start in range(0, n, CHUNK):
        x, t = level[start:start + CHUNK], second[start:start + CHUNK]
        s = surface.drawn(x, t)
        lo, mid, hi = _order_stats(s)
        point[start:start + CHUNK] = mid if surface.joint else surface.point(x, t)
        lows[start:start + CHUNK], highs[start:start + CHUNK] = lo, hi
        accepted_per_draw += np.count_nonzero(s >= target, axis=1)
        mean_per_draw += s.sum(axis=1, dtype=np.float64)
        if kept is not None:
            kept.append(s)
    out_level, out_second = surface.outside(level, second)
    extrapolated = out_level | out_second
    names = [p["metric"] for p in model["predictors"]]
    result: dict[str, Any] = {
        "model": {"study": model["provenance"]["study"], "simulated": model["simulated"], "label": model["label"],
                  "participants": model["provenance"]["participants"],
                  "n_participants": model["provenance"]["n_participants"],
                  "predictors": names, "tested": {p["metric"]: list(p["tested"]) for p in model["predictors"]}},
        "population_share": target,
        "draws": draws,
        "n_requests": len(cols),
        "n_scored": n,
        "n_unscored": len(cols) - n,
        "unscored": unscored,
    }
    if n == 0:
        result.update(acceptable={"share": None, "count": 0, "interval": [None, None]},
                      mean_share={"value": None, "interval": [None, None]}, distribution={}, worst=[],
                      extrapolated={"count": 0, "share": 0.0, "by_predictor": {}, "requests": []}, requests=[])
        return result
    count = int((point >= target).sum())
    result["acceptable"] = {"share": count / n, "count": count, "interval": _interval(accepted_per_draw / n)}
    result["mean_share"] = {"value": float(point.mean()), "interval": _interval(mean_per_draw / n)}
    edges = np.linspace(0, 1, HIST_BINS + 1)
    result["distribution"] = {
        "quantiles": {f"p{q}": float(v) for q, v in zip((10, 25, 50, 75, 90),
                                                       np.percentile(point, [10, 25, 50, 75, 90]))},
        "hist_edges": edges.tolist(),
        "hist_counts": np.histogram(point, bins=edges)[0].tolist(),
    }
    by_pred = {names[0]: int(out_level.sum())}
    if len(names) > 1:
        by_pred[names[1]] = int(out_second.sum())
    result["extrapolated"] = {"count": int(extrapolated.sum()), "share": float(extrapolated.mean()),
                              "by_predictor": by_pred,
                              "requests": [usable.ids[i] for i in np.flatnonzero(extrapolated)[:20].tolist()]}
    rows = _rows(usable, point, lows, highs, extrapolated)
    order = np.argsort(point, kind="stable")[:worst]
    result["worst"] = [{**rows[i], **_why(surface, float(level[i]),
                                          None if math.isnan(usable.second[i]) else float(usable.second[i]),
                                          float(point[i]), target)} for i in order.tolist()]
    result["requests"] = rows
    if kept is not None:
        result["_draws"] = np.hstack(kept) if kept else np.empty((draws, 0))
        result["_prompts"] = list(usable.prompts)
    return result


def fmt_share(x: float | None) -> str:
    return "—" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{100 * x:.1f} %"
