"""Opinion scores: MOS with Student-t CIs, per-participant normalisation, a SUREAL-style subject model, mixed models.

- ``mos``: mean rating per condition with a 95 % Student-t interval that never extends past the scale's ends
  (a CI of 4.8 ± 0.4 on a 1–5 scale is reported as [4.4, 5.0]).
- ``subject_model``: the model of Li & Bampis ("Recover subjective quality scores from noisy measurements",
  2017) that SUREAL fits as ``MLE_CO``: ``rating_ij = ψ_j + Δ_i + ν_i·ε``, with a true score ψ per stimulus, a
  bias Δ per rater (mean 0) and an inconsistency ν per rater. It is fitted by maximum likelihood with
  alternating closed-form updates (each update maximises the likelihood in one block given the others), which
  down-weights inconsistent raters and removes harsh or lenient ones' offsets. Raters are flagged as
  straight-liners (the same rating everywhere), harsh/lenient (bias clearly away from 0) or inconsistent.
- ``mixed_model``: factor effects with participant as a random intercept (statsmodels ``MixedLM``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
import pandas as pd
from scipy import stats


class RatingsError(ValueError):
    """Ratings that cannot be summarised (missing columns, values off the scale, too few raters)."""


def _require(df: pd.DataFrame, *cols: str) -> None:
    missing = [c for c in cols if c not in df.columns]
    if missing:
        raise RatingsError(f"ratings: missing column(s) {missing}")


def zscore_by_participant(
    df: pd.DataFrame, *, rating: str = "rating", participant: str = "participant"
) -> tuple[pd.Series, list[str]]:
    """Each participant's ratings as z-scores over their own ratings, and the participants left out.

    A participant whose ratings do not vary (a straight-liner, or a single rating) has no z-scores: their rows
    are NaN and their ids are returned, so callers can report them.
    """
    g = df.groupby(participant)[rating]
    mean, sd = g.transform("mean"), g.transform("std")
    z = (df[rating] - mean) / sd
    bad = sd.isna() | (sd <= 0)
    z[bad] = np.nan
    return z, sorted(str(p) for p in df.loc[bad, participant].unique())


def mos(
    df: pd.DataFrame,
    *,
    condition: str | Sequence[str] = "condition",
    rating: str = "rating",
    participant: str = "participant",
    scale: tuple[float, float] | None = (1, 5),
    normalise: Literal["z"] | None = None,
    confidence: float = 0.95,
) -> pd.DataFrame:
    """Mean opinion score per condition: ``n, mos, sd, ci_low, ci_high`` (Student-t, clipped to ``scale``).

    ``normalise="z"`` first turns each participant's ratings into z-scores (removing their personal offset and
    spread; straight-liners are dropped and listed in ``attrs["excluded_participants"]``), then maps them back
    onto the raw scale with the grand mean and SD of the kept ratings, so scores stay in familiar units. With a
    ``scale``, a mapped rating beyond its ends counts as a rating at that end (``attrs["clipped_ratings"]`` says
    how many), so the mean and its interval come from ratings on the scale rather than being cut off after.
    """
    cols = [condition] if isinstance(condition, str) else list(condition)
    _require(df, *cols, rating)
    values = pd.to_numeric(df[rating], errors="coerce")
    if values.isna().any():
        raise RatingsError(f"ratings: {int(values.isna().sum())} non-numeric value(s) in {rating!r}")
    if scale is not None:
        lo_end, hi_end = scale
        off = (values < lo_end) | (values > hi_end)
        if off.any():
            raise RatingsError(f"ratings: {int(off.sum())} value(s) outside the scale {scale}")
    data = df.assign(**{rating: values})
    excluded: list[str] = []
    clipped = 0  # mapped ratings moved to a scale end (normalise="z" with a scale only)
    if normalise == "z":
        _require(df, participant)
        z, excluded = zscore_by_participant(data, rating=rating, participant=participant)
        keep = z.notna()
        grand_mean, grand_sd = data.loc[keep, rating].mean(), data.loc[keep, rating].std()
        mapped = z[keep] * grand_sd + grand_mean
        if scale is not None:  # a mapped rating past the scale's end is a rating at that end
            clipped = int(((mapped < scale[0]) | (mapped > scale[1])).sum())
            mapped = mapped.clip(*scale)
        data = data.loc[keep].assign(**{rating: mapped})
    elif normalise is not None:
        raise RatingsError(f"unknown normalise {normalise!r}: use None or 'z'")
    g = data.groupby(cols, sort=False)[rating]
    out = g.agg(n="count", mos="mean", sd="std").reset_index()
    tcrit = stats.t.ppf(0.5 + confidence / 2, np.maximum(out["n"] - 1, 1))
    half = tcrit * out["sd"] / np.sqrt(out["n"])
    half = half.where(out["n"] > 1)
    out["ci_low"], out["ci_high"] = out["mos"] - half, out["mos"] + half
    if scale is not None:
        out["mos"] = out["mos"].clip(*scale)
        out["ci_low"] = out["ci_low"].clip(*scale)
        out["ci_high"] = out["ci_high"].clip(*scale)
    out.attrs["excluded_participants"] = excluded
    out.attrs["normalise"] = normalise
    out.attrs["clipped_ratings"] = clipped
    return out


# --- SUREAL-style subject model ------------------------------------------------------------------------------


@dataclass(frozen=True)
class SubjectModel:
    """A fitted ``rating = ψ_stimulus + Δ_rater + ν_rater·ε`` model: per-stimulus and per-rater tables."""

    stimuli: pd.DataFrame  # stimulus, quality, se, ci_low, ci_high, n
    raters: pd.DataFrame  # participant, bias, bias_se, inconsistency, n, sd, straight_liner, harsh, lenient, ...
    iterations: int
    log_likelihood: float


def subject_model(
    df: pd.DataFrame,
    *,
    stimulus: str = "stimulus",
    rating: str = "rating",
    participant: str = "participant",
    confidence: float = 0.95,
    min_bias: float = 0.5,
    inconsistency_factor: float = 2.0,
    max_iter: int = 1000,
    tol: float = 1e-8,
) -> SubjectModel:
    """Fit the Li & Bampis / SUREAL MLE_CO subject model and flag raters.

    Flags: ``straight_liner`` (two or more ratings, all identical); ``harsh`` / ``lenient`` (bias below
    −``min_bias`` / above ``min_bias`` scale points and its CI excluding 0); ``inconsistent`` (ν above
    ``inconsistency_factor`` × the median ν). CIs use the model's Fisher information, as SUREAL reports them.
    A rater with a single rating gets the others' pooled ν and is never flagged: one rating cannot show a bias.
    """
    _require(df, stimulus, rating, participant)
    values = pd.to_numeric(df[rating], errors="coerce").to_numpy(dtype=float)
    if np.isnan(values).any():
        raise RatingsError(f"ratings: non-numeric value(s) in {rating!r}")
    s_names, s_idx = np.unique(df[stimulus].astype(str).to_numpy(), return_inverse=True)
    p_names, p_idx = np.unique(df[participant].astype(str).to_numpy(), return_inverse=True)
    if len(p_names) < 2:
        raise RatingsError("subject_model: needs at least two raters")
    ns, npart = len(s_names), len(p_names)
    n_p = np.bincount(p_idx, minlength=npart).astype(float)
    # A rater with one rating fits it exactly (their bias is that rating's residual), so their ν cannot be
    # estimated: left free it falls to the floor and gives them a million times anyone's weight, pinning the
    # stimulus they rated and, through the mean-bias constraint, shifting every score. They get the pooled ν of
    # the others and take no part in the constraint (a drop-out after one trial, say).
    few = n_p < 2
    if few.all():
        raise RatingsError("subject_model: needs raters with at least two ratings each")
    spread = float(values.std()) or 1.0
    floor = 1e-3 * spread  # ν floor: a rater who fits perfectly would otherwise get infinite weight

    psi = np.bincount(s_idx, values, ns) / np.bincount(s_idx, minlength=ns)
    delta = np.zeros(npart)
    nu = np.full(npart, spread)
    it = 0
    for it in range(1, max_iter + 1):  # noqa: B007 - the count is reported
        w = 1.0 / nu[p_idx] ** 2
        new_psi = np.bincount(s_idx, w * (values - delta[p_idx]), ns) / np.bincount(s_idx, w, ns)
        new_delta = np.bincount(p_idx, values - new_psi[s_idx], npart) / n_p
        shift = new_delta[~few].mean()  # identifiability: mean bias 0 over the raters whose ν is estimated
        new_delta -= shift
        new_psi += shift
        resid = values - new_psi[s_idx] - new_delta[p_idx]
        sq = np.bincount(p_idx, resid**2, npart)
        new_nu = np.sqrt(sq / n_p)
        new_nu[few] = math.sqrt(sq[~few].sum() / n_p[~few].sum())
        new_nu = np.maximum(new_nu, floor)
        change = max(np.max(np.abs(new_psi - psi)), np.max(np.abs(new_delta - delta)), np.max(np.abs(new_nu - nu)))
        psi, delta, nu = new_psi, new_delta, new_nu
        if change < tol:
            break
    resid = values - psi[s_idx] - delta[p_idx]
    loglik = float(np.sum(-np.log(nu[p_idx]) - 0.5 * math.log(2 * math.pi) - resid**2 / (2 * nu[p_idx] ** 2)))

    zc = stats.norm.ppf(0.5 + confidence / 2)
    psi_se = 1.0 / np.sqrt(np.bincount(s_idx, 1.0 / nu[p_idx] ** 2, ns))
    delta_se = nu / np.sqrt(n_p)
    stim = pd.DataFrame({
        "stimulus": s_names, "quality": psi, "se": psi_se, "ci_low": psi - zc * psi_se,
        "ci_high": psi + zc * psi_se, "n": np.bincount(s_idx, minlength=ns),
    })
    raw_sd = pd.Series(values).groupby(p_idx).std(ddof=0).reindex(range(npart)).to_numpy()
    straight = (n_p >= 2) & (raw_sd == 0)
    clear = (np.abs(delta) > zc * delta_se) & ~few  # one rating says nothing about a rater's bias
    median_nu = float(np.median(nu[~few]))
    raters = pd.DataFrame({
        "participant": p_names, "bias": delta, "bias_se": delta_se, "bias_ci_low": delta - zc * delta_se,
        "bias_ci_high": delta + zc * delta_se, "inconsistency": nu, "n": n_p.astype(int), "sd": raw_sd,
        "straight_liner": straight, "harsh": clear & (delta <= -min_bias), "lenient": clear & (delta >= min_bias),
        "inconsistent": (nu > inconsistency_factor * median_nu) & ~few,
    })
    return SubjectModel(stimuli=stim, raters=raters, iterations=it, log_likelihood=loglik)


# --- mixed-effects model ---------------------------------------------------------------------------------------


def mixed_model(
    df: pd.DataFrame,
    formula: str,
    *,
    participant: str = "participant",
    confidence: float = 0.95,
) -> pd.DataFrame:
    """Fixed effects of a linear mixed model with a random intercept per participant, with Wald CIs.

    ``formula`` is a patsy formula for the fixed part, e.g. ``"rating ~ C(strategy) * C(indicator)"``; the random
    part is ``(1 | participant)``. Returns ``term, estimate, se, ci_low, ci_high, p`` plus ``attrs`` with the
    participant variance, the residual variance and whether the fit converged.
    """
    import warnings

    import statsmodels.formula.api as smf

    _require(df, participant)
    if df[participant].nunique() < 2:
        raise RatingsError("mixed_model: needs at least two participants")
    from patsy import PatsyError

    try:
        model = smf.mixedlm(formula, df, groups=df[participant])
    except PatsyError as exc:  # a bad formula, an unknown column, missing values: the caller's input, named
        raise RatingsError(f"mixed_model: {formula!r}: {str(exc).splitlines()[0]}") from None
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fit = model.fit(reml=True)
    names = list(fit.fe_params.index)
    ci = fit.conf_int(alpha=1 - confidence).loc[names]
    out = pd.DataFrame({
        "term": names, "estimate": fit.fe_params.to_numpy(), "se": fit.bse_fe.loc[names].to_numpy(),
        "ci_low": ci[0].to_numpy(), "ci_high": ci[1].to_numpy(), "p": fit.pvalues.loc[names].to_numpy(),
    })
    out.attrs["participant_variance"] = float(fit.cov_re.iloc[0, 0])
    out.attrs["residual_variance"] = float(fit.scale)
    out.attrs["converged"] = bool(fit.converged)
    out.attrs["warnings"] = [str(w.message) for w in caught]
    return out
