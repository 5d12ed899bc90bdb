"""Pairwise comparisons: Thurstone Case V and Bradley–Terry scales in JOD units, bootstrap CIs, 2AFC PSE and JND.

A *just-objectionable difference* (JOD) is the distance at which 75 % of answers prefer the better condition, as in
Perez-Ortiz & Mantiuk's pwcmp (2017). Thurstone Case V here is a maximum-likelihood fit of
``P(i beats j) = Φ((q_i − q_j) / σ)`` with ``σ = 1 / Φ⁻¹(0.75) ≈ 1.4826``, so a 1-JOD gap means 75 %.
Scores are anchored: the first condition is 0.

Unanimous pairs (every answer the same way) have an infinite maximum-likelihood distance. Like pwcmp, the fit
adds a *distance prior* built from the data: each compared pair contributes a density over distances (its binomial
likelihood, normalised, in both orientations, with one pseudo-vote given to a side that has none), and the prior
of any fitted distance is the mixture of those densities. It decays at large distances, so scores stay finite, and
it hardly moves well-measured pairs. (pwcmp moves one vote of a unanimous pair instead of adding one, and normalises
over the fitted distances; ours is a proper density, so it also works with a single vote per pair.)

Bradley–Terry (logistic) comes from ``choix`` (MIT); its log-strengths are divided by ``ln 3`` so that 1 unit is
also 75 % preference and the two scales can be compared directly.

Confidence intervals resample observers (participants, with replacement) and refit, warm-started from the full
fit; with only a count matrix they resample the trials of each pair instead.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Literal

import numpy as np
import pandas as pd
from scipy import optimize
from scipy.sparse.csgraph import connected_components
from scipy.special import log_ndtr, ndtri

from analysis.stats.logspace import logsumexp

SIGMA = 1.0 / float(ndtri(0.75))  # Φ(1 / SIGMA) = 0.75: one JOD
LN3 = math.log(3.0)  # logistic distance of 75 % preference
_LOG_SQRT_2PI = 0.5 * math.log(2.0 * math.pi)

Method = Literal["thurstone", "bradley_terry"]


class PairwiseError(ValueError):
    """Comparison data that cannot be scaled (unknown winner, disconnected design, bad matrix)."""


@dataclass(frozen=True)
class Comparisons:
    """Per-observer win counts: ``counts[p, i, j]`` is how often observer ``p`` preferred ``i`` over ``j``."""

    conditions: tuple[str, ...]
    participants: tuple[str, ...]
    counts: np.ndarray

    @property
    def total(self) -> np.ndarray:
        """The pooled ``N × N`` win-count matrix."""
        return self.counts.sum(axis=0)


def comparisons_from_frame(
    df: pd.DataFrame,
    *,
    a: str = "a",
    b: str = "b",
    winner: str = "winner",
    participant: str | None = "participant",
    conditions: Sequence[str] | None = None,
) -> Comparisons:
    """Tidy comparisons (one row per trial: the two conditions shown and the one chosen) as per-observer counts.

    ``winner`` must equal the row's ``a`` or ``b``; a missing winner (``None``/NaN) or ``"tie"`` counts half a win
    to each. ``conditions`` fixes the order (the first is the anchor at 0 JOD); by default the order of first
    appearance. Without a participant column every row counts as one observer's.
    """
    for col in (a, b, winner):
        if col not in df.columns:
            raise PairwiseError(f"comparisons: missing column {col!r}")
    if conditions is None:
        seen = pd.unique(pd.concat([df[a], df[b]], ignore_index=True).astype(str))
        conditions = [str(c) for c in seen]
    conditions = tuple(str(c) for c in conditions)
    index = {c: i for i, c in enumerate(conditions)}
    parts = df[participant].astype(str) if participant and participant in df.columns else pd.Series("all", df.index)
    part_names = tuple(pd.unique(parts))
    pindex = {p: i for i, p in enumerate(part_names)}
    counts = np.zeros((len(part_names), len(conditions), len(conditions)))
    rows = zip(df[a].astype(str), df[b].astype(str), df[a], df[b], df[winner], parts)
    for row, (ca, cb, raw_a, raw_b, w, p) in enumerate(rows):
        if ca not in index or cb not in index:
            raise PairwiseError(f"row {row}: condition {ca!r} or {cb!r} is not in {conditions}")
        if ca == cb:
            raise PairwiseError(f"row {row}: a condition compared with itself ({ca!r})")
        i, j, k = index[ca], index[cb], pindex[p]
        if _missing(w) or str(w) == "tie":
            counts[k, i, j] += 0.5
            counts[k, j, i] += 0.5
        elif str(w) == ca or _same(w, raw_a):  # numeric labels: a missing winner turns 10 into 10.0
            counts[k, i, j] += 1
        elif str(w) == cb or _same(w, raw_b):
            counts[k, j, i] += 1
        else:
            raise PairwiseError(f"row {row}: winner {w!r} is neither {ca!r} nor {cb!r}")
    return Comparisons(conditions=conditions, participants=part_names, counts=counts)


def _check_matrix(counts: np.ndarray) -> np.ndarray:
    c = np.asarray(counts, dtype=float)
    if c.ndim != 2 or c.shape[0] != c.shape[1] or c.shape[0] < 2:
        raise PairwiseError(f"count matrix must be square with at least 2 conditions, got shape {c.shape}")
    if not np.all(np.isfinite(c)) or np.any(c < 0):
        raise PairwiseError("count matrix must hold finite, non-negative counts")
    c = c.copy()
    np.fill_diagonal(c, 0.0)
    return c


def is_connected(counts: np.ndarray) -> bool:
    """Whether every condition is linked to every other through compared pairs (needed for one common scale)."""
    graph = (np.asarray(counts) + np.asarray(counts).T) > 0
    return connected_components(graph, directed=False)[0] == 1


# --- Thurstone Case V ----------------------------------------------------------------------------------------


@lru_cache(maxsize=65536)
def _log_z(k: float, m: float) -> float:
    """log ∫ Φ(x/σ)^k Φ(−x/σ)^m dx: the normalising constant of one prior component (trapezoid, fine grid)."""
    grid = np.linspace(-40.0, 40.0, 8001)
    x = grid / SIGMA
    return float(logsumexp(k * log_ndtr(x) + m * log_ndtr(-x), axis=0) + math.log(grid[1] - grid[0]))


class _Prior:
    """The pwcmp-style distance prior of one count matrix: a mixture of normalised pair likelihoods."""

    def __init__(self, wins: np.ndarray, losses: np.ndarray):
        k = np.concatenate([wins, losses])
        m = np.concatenate([losses, wins])
        k = np.where(k > 0, k, 1.0)  # one pseudo-vote for a side with none: keeps every component proper
        m = np.where(m > 0, m, 1.0)
        km, inverse = np.unique(np.stack([k, m], axis=1), axis=0, return_inverse=True)
        weights = np.bincount(inverse.ravel(), minlength=len(km)).astype(float)
        log_z = np.array([_log_z(float(a), float(b)) for a, b in km])
        self.k, self.m = km[:, 0], km[:, 1]
        self.offset = np.log(weights / weights.sum()) - log_z  # mixture weight and normalisation

    def terms(self, x: np.ndarray, lp: np.ndarray, lq: np.ndarray, r1: np.ndarray, r2: np.ndarray):
        """log π(d) and its first and second derivatives in d, at each fitted distance d = σx."""
        comp = self.k * lp[:, None] + self.m * lq[:, None] + self.offset
        total = logsumexp(comp, axis=1)
        w = np.exp(comp - total[:, None])
        g = (self.k * r1[:, None] - self.m * r2[:, None]) / SIGMA
        h = -(self.k * (r1 * (x + r1))[:, None] + self.m * (r2 * (r2 - x))[:, None]) / SIGMA**2
        mean_g = (w * g).sum(axis=1)
        return total, mean_g, (w * (h + g * g)).sum(axis=1) - mean_g**2


def _thurstone_terms(q: np.ndarray, ii, jj, wij, wji, prior: _Prior | None):
    """Negative log posterior, its gradient and Hessian in the free scores (all but the first)."""
    n = len(q)
    x = (q[ii] - q[jj]) / SIGMA
    lp, lq = log_ndtr(x), log_ndtr(-x)
    log_phi = -0.5 * x * x - _LOG_SQRT_2PI
    r1, r2 = np.exp(log_phi - lp), np.exp(log_phi - lq)
    value = -(wij * lp + wji * lq).sum()
    gd = -(wij * r1 - wji * r2) / SIGMA
    hd = (wij * r1 * (x + r1) + wji * r2 * (r2 - x)) / SIGMA**2
    if prior is not None:
        lpi, dlpi, d2lpi = prior.terms(x, lp, lq, r1, r2)
        value -= lpi.sum()
        gd = gd - dlpi
        hd = hd - d2lpi
    grad = np.bincount(ii, gd, n) - np.bincount(jj, gd, n)
    diag = np.bincount(ii, hd, n) + np.bincount(jj, hd, n)
    hess = np.diag(diag)
    hess[ii, jj] -= hd  # each unordered pair appears once, so plain fancy assignment is safe
    hess[jj, ii] -= hd
    return float(value), grad[1:], hess[1:, 1:]


def _newton(q0: np.ndarray, args, max_iter: int = 100) -> np.ndarray | None:
    """Damped Newton with backtracking (a Levenberg shift where the prior makes the Hessian indefinite)."""
    q = q0.copy()
    value, grad, hess = _thurstone_terms(q, *args)
    eye = np.eye(len(grad))
    for _ in range(max_iter):
        if np.max(np.abs(grad)) < 1e-8:
            return q
        shift = 0.0
        while True:
            try:
                chol = np.linalg.cholesky(hess + shift * eye)
                break
            except np.linalg.LinAlgError:
                shift = max(4 * shift, 1e-6 + 1e-3 * float(np.max(np.abs(np.diag(hess)))))
        step = np.linalg.solve(chol.T, np.linalg.solve(chol, grad))
        if shift == 0.0 and float(grad @ step) < 1e-12:  # Newton decrement: within rounding of the optimum
            q[1:] -= step
            return q
        t = 1.0
        while t > 1e-10:
            cand = q.copy()
            cand[1:] -= t * step
            new_value, new_grad, new_hess = _thurstone_terms(cand, *args)
            if new_value <= value - 1e-4 * t * float(grad @ step):
                break
            t *= 0.5
        else:
            return q if np.max(np.abs(grad)) < 1e-5 else None
        q, value, grad, hess = cand, new_value, new_grad, new_hess
    return q if np.max(np.abs(grad)) < 1e-5 else None


def thurstone_scale(counts: np.ndarray, *, prior: bool = True, start: np.ndarray | None = None) -> np.ndarray:
    """Thurstone Case V scores in JOD (first condition = 0) from an ``N × N`` win-count matrix.

    ``prior=False`` is the plain maximum-likelihood fit (unanimous pairs then drift to very large distances).
    """
    c = _check_matrix(counts)
    if not is_connected(c):
        raise PairwiseError("the comparison graph is disconnected: some conditions share no chain of comparisons")
    ii, jj = np.nonzero(np.triu((c + c.T) > 0, 1))
    wij, wji = c[ii, jj], c[jj, ii]
    pri = _Prior(wij, wji) if prior else None
    q0 = np.zeros(c.shape[0]) if start is None else np.asarray(start, dtype=float) - start[0]
    q = _newton(q0, (ii, jj, wij, wji, pri))
    if q is None:  # not converged: fall back to a quasi-Newton search from zero

        def fun(free):
            value, grad, _ = _thurstone_terms(np.concatenate([[0.0], free]), ii, jj, wij, wji, pri)
            return value, grad

        res = optimize.minimize(fun, np.zeros(c.shape[0] - 1), jac=True, method="L-BFGS-B")
        q = np.concatenate([[0.0], res.x])
    return q


# --- Bradley–Terry -------------------------------------------------------------------------------------------


def _missing(value: Any) -> bool:
    try:
        return bool(pd.isna(value))
    except (TypeError, ValueError):  # a list or array is not a missing scalar
        return False


def _same(winner: Any, label: Any) -> bool:
    """The winner names this condition as a number would (``10.0`` for ``10``)."""
    try:
        return float(winner) == float(label)
    except (TypeError, ValueError):
        return False


def bradley_terry_scale(counts: np.ndarray, *, alpha: float = 0.1) -> np.ndarray:
    """Bradley–Terry scores from ``choix`` in 75 %-preference units (log-strength / ln 3), first condition = 0.

    ``alpha`` is choix's regularisation (a pseudo-comparison rate between every pair); it keeps unanimous
    pairs finite. With ``alpha=0`` they diverge, as any maximum-likelihood fit does. A disconnected design is an
    error whatever ``alpha``: the pseudo-comparisons would tie never-compared groups into one scale on no data.
    """
    import choix

    c = _check_matrix(counts)
    if not is_connected(c):
        raise PairwiseError("the comparison graph is disconnected: some conditions share no chain of comparisons")
    theta = choix.ilsr_pairwise_dense(c, alpha=alpha, max_iter=500, tol=1e-10)
    return (theta - theta[0]) / LN3


def _fit(counts: np.ndarray, method: Method, start: np.ndarray | None = None, **kw) -> np.ndarray:
    if method == "thurstone":
        return thurstone_scale(counts, start=start, **kw)
    if method == "bradley_terry":
        return bradley_terry_scale(counts, **kw)
    raise PairwiseError(f"unknown method {method!r}: use 'thurstone' or 'bradley_terry'")


def bootstrap_counts(data: Comparisons | np.ndarray, n_boot: int, rng: np.random.Generator) -> np.ndarray:
    """``n_boot`` resampled count matrices: observers with replacement, or each pair's trials for a bare matrix.

    A unanimous pair (every answer one way) would stay unanimous in every resample, and its interval would
    collapse to a point however few answers it rests on (3 of 3 is no proof that everyone prefers it). Its
    answers are therefore redrawn in each resample as binomial with the smoothed share (k + ½)/(n + 1), so that
    the interval shows how little a few unanimous answers pin down; other pairs are resampled as they are."""
    c = _check_matrix(data.total if isinstance(data, Comparisons) else data)
    iu = np.triu_indices(len(c), 1)
    k, total = c[iu], (c + c.T)[iu]
    unanimous = (total > 0) & ((k == 0) | (k == total))
    observers = isinstance(data, Comparisons) and len(data.participants) > 1
    if observers:
        p = len(data.participants)
        draws = rng.integers(0, p, size=(n_boot, p))
        weights = np.zeros((n_boot, p))
        np.add.at(weights, (np.arange(n_boot)[:, None], draws), 1.0)
        out = np.einsum("bp,pij->bij", weights, data.counts)
        redraw = unanimous
    else:
        out = np.zeros((n_boot, *c.shape))
        redraw = total > 0  # a bare matrix: every compared pair's trials are redrawn
    if redraw.any():
        a, b = iu[0][redraw], iu[1][redraw]
        trials = np.rint(out[:, a, b] + out[:, b, a]) if observers else np.broadcast_to(total[redraw], (n_boot, a.size))
        share = np.where(unanimous, (k + 0.5) / (total + 1.0), k / np.maximum(total, 1.0))[redraw]
        wins = rng.binomial(trials.astype(int), share).astype(float)
        out[:, a, b] = wins
        out[:, b, a] = trials - wins
    return out


def scale(
    data: Comparisons | pd.DataFrame | np.ndarray,
    *,
    method: Method = "thurstone",
    conditions: Sequence[str] | None = None,
    n_boot: int = 2000,
    ci: float = 0.95,
    seed: int = 0,
    **fit_kw,
) -> pd.DataFrame:
    """Scores in JOD with percentile bootstrap CIs, one row per condition.

    ``data`` is a tidy comparison frame (see ``comparisons_from_frame``), a ``Comparisons`` value or a bare
    ``N × N`` count matrix. Columns: ``condition, jod, se, ci_low, ci_high, method``; ``attrs["n_boot"]`` is the
    number of usable refits (replicates whose resampled design is disconnected are skipped).
    """
    if isinstance(data, pd.DataFrame):
        data = comparisons_from_frame(data, conditions=conditions)
    if isinstance(data, Comparisons):
        names, total = data.conditions, data.total
    else:
        total = _check_matrix(data)
        names = tuple(conditions) if conditions is not None else tuple(str(i) for i in range(total.shape[0]))
    if len(names) != total.shape[0]:
        raise PairwiseError(f"{len(names)} condition names for a {total.shape[0]}-condition matrix")
    est = _fit(total, method, **fit_kw)
    reps = []
    if n_boot > 0:
        rng = np.random.default_rng(seed)
        for boot in bootstrap_counts(data, n_boot, rng):
            if not is_connected(boot):
                continue
            reps.append(_fit(boot, method, start=est, **fit_kw))
    reps_arr = np.array(reps) if reps else np.full((0, len(names)), np.nan)
    lo_q, hi_q = (1 - ci) / 2, 1 - (1 - ci) / 2
    if len(reps_arr):
        se, lo, hi = reps_arr.std(axis=0, ddof=1), *np.quantile(reps_arr, [lo_q, hi_q], axis=0)
    else:
        se = lo = hi = np.full(len(names), np.nan)
    out = pd.DataFrame({"condition": names, "jod": est, "se": se, "ci_low": lo, "ci_high": hi, "method": method})
    out.attrs["n_boot"] = len(reps_arr)
    return out


def preference(jod_difference: float | np.ndarray, method: Method = "thurstone") -> float | np.ndarray:
    """Predicted share of answers preferring the higher-scored condition at a given JOD difference."""
    d = np.asarray(jod_difference, dtype=float)
    if method == "thurstone":
        from scipy.special import ndtr

        return ndtr(d / SIGMA)
    return 1.0 / (1.0 + np.exp(-d * LN3))


# --- 2AFC against a reference: PSE and JND -------------------------------------------------------------------


@dataclass(frozen=True)
class PseJnd:
    """Point of subjective equality (50 %) and JND (75 % point − 50 % point) of a logistic fit, with CIs."""

    pse: float
    jnd: float
    pse_ci: tuple[float, float]
    jnd_ci: tuple[float, float]
    n_trials: int
    n_boot: int

    def as_dict(self) -> dict:
        return {
            "pse": self.pse, "jnd": self.jnd, "pse_ci_low": self.pse_ci[0], "pse_ci_high": self.pse_ci[1],
            "jnd_ci_low": self.jnd_ci[0], "jnd_ci_high": self.jnd_ci[1], "n_trials": self.n_trials,
            "n_boot": self.n_boot,
        }


def _logistic_fit(x: np.ndarray, y: np.ndarray, w: np.ndarray, ridge: float = 1e-6) -> tuple[float, float]:
    """Weighted logistic regression ``logit P = b0 + b1·x`` by Newton's method (x already centred/scaled)."""
    b = np.zeros(2)
    X = np.stack([np.ones_like(x), x], axis=1)
    for _ in range(100):
        eta = np.clip(X @ b, -30, 30)
        p = 1.0 / (1.0 + np.exp(-eta))
        g = X.T @ (w * (y - p)) - ridge * b
        h = (X * (w * p * (1 - p))[:, None]).T @ X + ridge * np.eye(2)
        step = np.linalg.solve(h, g)
        b += step
        if np.max(np.abs(step)) < 1e-10:
            break
    return float(b[0]), float(b[1])


def _check_overlap(x: np.ndarray, y: np.ndarray) -> None:
    """A logistic fit needs the two answers to overlap in level: if every answer is the same, or the levels split
    them perfectly (complete or quasi-complete separation), the slope has no finite estimate and a fit would report
    whatever its iteration cap left, with an interval far too narrow. Say what the data do show instead."""
    chosen, not_chosen = x[y == 1], x[y == 0]
    if not len(chosen) or not len(not_chosen):
        raise PairwiseError(f"pse_jnd: every answer is {'1' if len(chosen) else '0'}: the PSE lies outside the "
                            f"levels tested ({x.min():g} to {x.max():g}) and cannot be estimated")
    for above, below in ((chosen, not_chosen), (not_chosen, chosen)):
        if below.max() <= above.min():
            raise PairwiseError(f"pse_jnd: the levels split the answers perfectly: the PSE lies between "
                                f"{below.max():g} and {above.min():g} and the JND is below the level spacing; "
                                f"neither has a finite estimate")


def pse_jnd(
    df: pd.DataFrame,
    *,
    level: str = "level",
    response: str = "response",
    participant: str | None = "participant",
    n_boot: int = 1000,
    ci: float = 0.95,
    seed: int = 0,
) -> PseJnd:
    """PSE and JND of a 2AFC comparison against a fixed reference across test levels.

    ``response`` is 1 when the test was chosen (e.g. "the test felt faster") and 0 otherwise, one row per trial.
    The fit is ``P(test chosen) = 1 / (1 + exp(−(level − PSE) / s))``; ``JND = s·ln 3`` is the distance from the
    50 % to the 75 % point, in the units of ``level``. A falling curve gives a negative JND. CIs resample
    participants (or trials, without a participant column); refits with a flat curve are skipped.
    """
    for col in (level, response):
        if col not in df.columns:
            raise PairwiseError(f"pse_jnd: missing column {col!r}")
    x = df[level].to_numpy(dtype=float)
    y = df[response].to_numpy(dtype=float)
    if not np.all(np.isin(y, (0.0, 1.0))):
        raise PairwiseError("pse_jnd: responses must be 0 or 1")
    if np.unique(x).size < 2:
        raise PairwiseError("pse_jnd: need at least two test levels")
    _check_overlap(x, y)
    centre, spread = float(x.mean()), float(x.std()) or 1.0
    z = (x - centre) / spread

    def fit(weights: np.ndarray) -> tuple[float, float]:
        b0, b1 = _logistic_fit(z, y, weights)
        if abs(b1) < 1e-9:
            return math.nan, math.nan
        return centre - spread * b0 / b1, spread * LN3 / b1

    pse, jnd = fit(np.ones_like(x))
    rng = np.random.default_rng(seed)
    groups = df[participant].astype(str).to_numpy() if participant and participant in df.columns else None
    if groups is not None and np.unique(groups).size > 1:
        names, gidx = np.unique(groups, return_inverse=True)
        draws = rng.integers(0, len(names), size=(n_boot, len(names)))
        gw = np.zeros((n_boot, len(names)))
        np.add.at(gw, (np.arange(n_boot)[:, None], draws), 1.0)
        weight_sets = gw[:, gidx]
    else:
        draws = rng.integers(0, len(x), size=(n_boot, len(x)))
        weight_sets = np.zeros((n_boot, len(x)))
        np.add.at(weight_sets, (np.arange(n_boot)[:, None], draws), 1.0)
    reps = np.array([fit(w) for w in weight_sets]) if n_boot > 0 else np.empty((0, 2))
    reps = reps[np.all(np.isfinite(reps), axis=1)] if len(reps) else reps
    lo_q, hi_q = (1 - ci) / 2, 1 - (1 - ci) / 2
    if len(reps):
        pse_ci = tuple(float(v) for v in np.quantile(reps[:, 0], [lo_q, hi_q]))
        jnd_ci = tuple(float(v) for v in np.quantile(reps[:, 1], [lo_q, hi_q]))
    else:
        pse_ci = jnd_ci = (math.nan, math.nan)
    return PseJnd(pse=pse, jnd=jnd, pse_ci=pse_ci, jnd_ci=jnd_ci, n_trials=len(x), n_boot=len(reps))
