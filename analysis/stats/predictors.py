"""Which stream metric predicts perceived speed: rank candidate metrics by how well they explain human answers.

For every stimulus the candidate metrics (``candidate_metrics``: TTFT, decode tokens/s, chars/s, ITL CV and p99,
stall time, end-to-end time, Andes QoE, Etalon fluidity) are compared with the responses to it:

- rank correlation (Spearman ρ with a bootstrap CI over stimuli, and Kendall τ-b) between the metric and the
  mean response per stimulus — for ratings and for yes/no answers alike;
- for yes/no answers, the held-out log-likelihood of a one-metric logistic model, by k-fold cross-validation
  grouped by participant (no participant is in both the training and the test fold), reported per trial and
  as the gain over an intercept-only model fitted on the same folds. This is the number to rank by: it rewards
  a metric that predicts new people's answers, not one that happens to order a few stimulus means.

A metric that is undefined for a stimulus (e.g. tokens/s of a one-piece stream) leaves that stimulus out for
that metric only; ``n_stimuli`` and ``n_trials`` say how many were used.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Literal

import numpy as np
import pandas as pd
from scipy import stats

from analysis.stats import qoe
from playback.core import metrics as stream_metrics
from playback.core.stream import Stream

CANDIDATES: tuple[str, ...] = (
    "ttft_ms", "tokens_per_s", "chars_per_s", "itl_cv", "itl_p99_ms", "stall_total_ms", "e2e_ms",
    "andes_qoe", "fluidity_index",
)


class PredictorError(ValueError):
    """Inputs that cannot be compared (missing columns, unknown stimuli, non-binary yes/no data)."""


def candidate_metrics(
    streams: Mapping[str, Stream] | Iterable[tuple[str, Stream]],
    *,
    stall_threshold_ms: float = stream_metrics.DEFAULT_STALL_THRESHOLD_MS,
    ttft_ms: float = qoe.DEFAULT_TTFT_MS,
    tds_tokens_per_s: float = qoe.DEFAULT_TDS_TOKENS_PER_S,
    tbt_deadline_ms: float = qoe.DEFAULT_TBT_DEADLINE_MS,
) -> pd.DataFrame:
    """One row per stimulus (``stimulus`` column plus ``CANDIDATES``); undefined values are NaN."""
    items = streams.items() if isinstance(streams, Mapping) else streams
    rows = []
    for name, stream in items:
        m = stream_metrics.compute(stream, stall_threshold_ms=stall_threshold_ms)
        rows.append({
            "stimulus": str(name), "ttft_ms": m.ttft_ms, "tokens_per_s": m.tokens_per_s,
            "chars_per_s": m.chars_per_s, "itl_cv": m.itl_cv, "itl_p99_ms": m.itl_p99_ms,
            "stall_total_ms": m.stall_total_ms, "e2e_ms": m.e2e_ms,
            "andes_qoe": qoe.andes_qoe(stream, ttft_ms=ttft_ms, tds_tokens_per_s=tds_tokens_per_s),
            "fluidity_index": qoe.fluidity_index(
                stream, ttft_deadline_ms=ttft_ms, tbt_deadline_ms=tbt_deadline_ms
            ).fluidity,
        })
    return pd.DataFrame(rows, columns=["stimulus", *CANDIDATES]).astype({c: float for c in CANDIDATES})


# --- small numeric helpers -----------------------------------------------------------------------------------


def _logistic(x: np.ndarray, y: np.ndarray, ridge: float = 1e-4) -> np.ndarray:
    """``[b0, b1]`` of ``logit P(y=1) = b0 + b1·x`` by Newton's method, with a tiny ridge against separation."""
    X = np.stack([np.ones_like(x), x], axis=1)
    b = np.zeros(2)
    penalty = np.diag([0.0, ridge])
    for _ in range(100):
        p = 1.0 / (1.0 + np.exp(-np.clip(X @ b, -35, 35)))
        g = X.T @ (y - p) - penalty @ b
        h = (X * (p * (1 - p))[:, None]).T @ X + penalty + 1e-12 * np.eye(2)
        step = np.linalg.solve(h, g)
        b += step
        if np.max(np.abs(step)) < 1e-9:
            break
    return b


def _loglik(p: np.ndarray, y: np.ndarray) -> float:
    p = np.clip(p, 1e-12, 1 - 1e-12)
    return float(np.sum(y * np.log(p) + (1 - y) * np.log(1 - p)))


def grouped_folds(groups: np.ndarray, folds: int, rng: np.random.Generator) -> np.ndarray:
    """A fold per row such that all rows of one group share a fold (groups shuffled, dealt round-robin)."""
    names, idx = np.unique(groups, return_inverse=True)
    k = min(folds, len(names))
    if k < 2:  # a single participant: fall back to folds over trials
        return rng.permutation(len(groups)) % max(min(folds, len(groups)), 2)
    order = rng.permutation(len(names))
    fold_of = np.empty(len(names), dtype=int)
    fold_of[order] = np.arange(len(names)) % k
    return fold_of[idx]


def heldout_loglik(x: np.ndarray, y: np.ndarray, fold: np.ndarray) -> tuple[float, float]:
    """Held-out log-likelihood (summed over trials) of the one-metric logistic model and of intercept only."""
    total = null = 0.0
    for f in np.unique(fold):
        test, train = fold == f, fold != f
        if not train.any() or not test.any():
            continue
        mu, sd = x[train].mean(), x[train].std() or 1.0
        b = _logistic((x[train] - mu) / sd, y[train])
        total += _loglik(1.0 / (1.0 + np.exp(-(b[0] + b[1] * (x[test] - mu) / sd))), y[test])
        rate = (y[train].sum() + 0.5) / (train.sum() + 1.0)
        null += _loglik(np.full(test.sum(), rate), y[test])
    return total, null


def _bootstrap_spearman(x: np.ndarray, y: np.ndarray, n_boot: int, rng: np.random.Generator) -> np.ndarray:
    """Spearman ρ of ``n_boot`` resamples of the (x, y) pairs, vectorised over resamples."""
    idx = rng.integers(0, len(x), size=(n_boot, len(x)))
    rx = stats.rankdata(x[idx], axis=1)
    ry = stats.rankdata(y[idx], axis=1)
    rx -= rx.mean(axis=1, keepdims=True)
    ry -= ry.mean(axis=1, keepdims=True)
    denom = np.sqrt((rx * rx).sum(axis=1) * (ry * ry).sum(axis=1))
    with np.errstate(invalid="ignore", divide="ignore"):
        rho = (rx * ry).sum(axis=1) / denom
    return rho[np.isfinite(rho)]


# --- the ranking ---------------------------------------------------------------------------------------------


def rank_predictors(
    metrics: pd.DataFrame,
    responses: pd.DataFrame,
    *,
    stimulus: str = "stimulus",
    response: str = "response",
    participant: str = "participant",
    candidates: Sequence[str] | None = None,
    kind: Literal["binary", "rating"] | None = None,
    n_boot: int = 1000,
    folds: int = 5,
    confidence: float = 0.95,
    seed: int = 0,
) -> pd.DataFrame:
    """A tidy table, best predictor first: one row per candidate metric.

    ``metrics`` has one row per stimulus; ``responses`` one row per trial (``stimulus``, ``response`` and, for
    grouped cross-validation, ``participant``). ``kind`` defaults to ``"binary"`` when every response is 0 or 1.
    Columns: ``rank, metric, n_stimuli, n_trials, spearman, spearman_ci_low, spearman_ci_high, kendall,
    kendall_p`` and, for binary data, ``loglik_per_trial, null_loglik_per_trial, loglik_gain`` (held-out, per
    trial; the ranking key). Rating data are ranked by ``|spearman|``.
    """
    for frame, cols, what in ((metrics, [stimulus], "metrics"), (responses, [stimulus, response], "responses")):
        missing = [c for c in cols if c not in frame.columns]
        if missing:
            raise PredictorError(f"{what}: missing column(s) {missing}")
    if metrics[stimulus].duplicated().any():
        raise PredictorError("metrics: more than one row for a stimulus")
    if candidates is None:
        candidates = [c for c in CANDIDATES if c in metrics.columns]
    unknown = [c for c in candidates if c not in metrics.columns]
    if unknown or not candidates:
        raise PredictorError(f"metrics: no column(s) {unknown or 'to rank'}")
    y_all = pd.to_numeric(responses[response], errors="coerce").to_numpy(dtype=float)
    if np.isnan(y_all).any():
        raise PredictorError(f"responses: non-numeric value(s) in {response!r}")
    binary = bool(np.isin(y_all, (0.0, 1.0)).all())
    kind = kind or ("binary" if binary else "rating")
    if kind == "binary" and not binary:
        raise PredictorError("responses: yes/no analysis needs responses coded 0/1")
    stim_all = responses[stimulus].astype(str).to_numpy()
    known = set(metrics[stimulus].astype(str))
    strays = sorted(set(stim_all) - known)
    if strays:
        raise PredictorError(f"responses: stimuli without metrics: {strays[:5]}")
    groups = (
        responses[participant].astype(str).to_numpy() if participant in responses.columns
        else np.arange(len(responses)).astype(str)
    )
    rng = np.random.default_rng(seed)
    fold_all = grouped_folds(groups, folds, rng)
    table = metrics.assign(**{stimulus: metrics[stimulus].astype(str)}).set_index(stimulus)
    mean_resp = pd.Series(y_all).groupby(stim_all).mean()
    lo_q, hi_q = (1 - confidence) / 2, 1 - (1 - confidence) / 2

    rows = []
    for name in candidates:
        col = pd.to_numeric(table[name], errors="coerce")
        ok_stim = col.dropna().index.intersection(mean_resp.index)
        xs, ys = col.loc[ok_stim].to_numpy(dtype=float), mean_resp.loc[ok_stim].to_numpy(dtype=float)
        row = {"metric": name, "n_stimuli": len(ok_stim)}
        trial_ok = np.isin(stim_all, ok_stim)
        row["n_trials"] = int(trial_ok.sum())
        if len(ok_stim) >= 3 and np.ptp(xs) > 0 and np.ptp(ys) > 0:
            row["spearman"] = float(stats.spearmanr(xs, ys).statistic)
            tau = stats.kendalltau(xs, ys)
            row["kendall"], row["kendall_p"] = float(tau.statistic), float(tau.pvalue)
            boots = _bootstrap_spearman(xs, ys, n_boot, rng) if n_boot > 0 else np.empty(0)
            row["spearman_ci_low"], row["spearman_ci_high"] = (
                (float(np.quantile(boots, lo_q)), float(np.quantile(boots, hi_q))) if len(boots) else (math.nan,) * 2
            )
        else:
            row.update(spearman=math.nan, kendall=math.nan, kendall_p=math.nan, spearman_ci_low=math.nan,
                       spearman_ci_high=math.nan)
        if kind == "binary":
            # answers that never vary leave nothing to predict: an unpenalised intercept would fit them exactly
            # and show every metric a "gain" over the smoothed null rate
            if row["n_trials"] and np.ptp(xs) > 0 and np.ptp(y_all[trial_ok]) > 0:
                x_trial = col.loc[stim_all[trial_ok]].to_numpy(dtype=float)
                ll, null = heldout_loglik(x_trial, y_all[trial_ok], fold_all[trial_ok])
                n = row["n_trials"]
                row.update(loglik_per_trial=ll / n, null_loglik_per_trial=null / n, loglik_gain=(ll - null) / n)
            else:
                row.update(loglik_per_trial=math.nan, null_loglik_per_trial=math.nan, loglik_gain=math.nan)
        rows.append(row)

    out = pd.DataFrame(rows)
    key = out["loglik_gain"] if kind == "binary" else out["spearman"].abs()
    out = out.assign(_key=key).sort_values("_key", ascending=False, na_position="last")
    # a metric without a defined key (constant over the stimuli, or answers that never vary) is listed, unranked
    ranked = out["_key"].notna().to_numpy()
    out.insert(0, "rank", np.where(ranked, np.cumsum(ranked), np.nan))
    cols = ["rank", "metric", "n_stimuli", "n_trials", "spearman", "spearman_ci_low", "spearman_ci_high",
            "kendall", "kendall_p"]
    if kind == "binary":
        cols += ["loglik_per_trial", "null_loglik_per_trial", "loglik_gain"]
    out = out[cols].reset_index(drop=True)
    out["rank"] = out["rank"].astype("Int64")
    out.attrs["kind"] = kind
    return out
