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


def straight_liners(df: pd.DataFrame, *, rating: str = "rating", participant: str = "participant") -> list[dict]:
    """Raters who gave the same rating to everything (two ratings or more): ``{participant, n, value}`` each."""
    _require(df, rating, participant)
    g = df.groupby(participant)[rating].agg(["count", "nunique", "first"])
    flat = g[(g["count"] >= 2) & (g["nunique"] == 1)]
    return [{"participant": str(p), "n": int(r["count"]), "value": float(r["first"])} for p, r in flat.iterrows()]


def straight_liner_warning(flat: list[dict]) -> str:
    """The sentence the results and the report show about straight-liners."""
    names = ", ".join(f"{f['participant']} ({f['n']}× {f['value']:g})" for f in flat[:10])
    more = f" and {len(flat) - 10} more" if len(flat) > 10 else ""
    return (f"{len(flat)} rater(s) gave the same rating to every stimulus (straight-liners: {names}{more}); "
            f"they are left out of the subject model's quality scores (their ratings say nothing about "
            f"differences between stimuli) but kept in the MOS table.")


# --- SUREAL-style subject model ------------------------------------------------------------------------------


@dataclass(frozen=True)
class SubjectModel:
    """A fitted ``rating = ψ_stimulus + Δ_rater + ν_rater·ε`` model: per-stimulus and per-rater tables.

    ``excluded`` lists the raters left out of the fit (straight-liners); they stay in ``raters`` with
    ``excluded=True``.
    """

    stimuli: pd.DataFrame  # stimulus, quality, se, ci_low, ci_high, n, se_noise, se_raters
    raters: pd.DataFrame  # participant, bias, bias_se, inconsistency, n, sd, straight_liner, excluded, harsh, ...
    iterations: int
    log_likelihood: float
    excluded: tuple[str, ...] = ()
    rater_bias_sd: float = 0.0  # the spread of biases across raters, beyond their estimation noise
    interval: str = "jackknife"  # how ``se`` was found: delete-one-rater jackknife, or "model" with two raters


def _covariance(s_idx: np.ndarray, p_idx: np.ndarray, w: np.ndarray, ns: int, npart: int,
                free: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Variances of ψ and Δ and their covariances (stimulus × rater), for weighted least squares with Σ Δ = 0
    over the raters not in ``free``.

    The information F is singular along the shift v = (ψ + 1, Δ − 1); with the constraint c (1 on constrained
    Δ) M = F + ccᵀ is not, M⁻¹ solves the constrained problem, and Cov = M⁻¹FM⁻¹ = M⁻¹ − vvᵀ/(cᵀv)². M⁻¹ comes
    block-wise: the Δ block is diagonal plus rank one (Sherman–Morrison), leaving one stimuli × stimuli inverse.
    Written without matrix products: these small ones are slower through a threaded BLAS on a busy machine than
    the arithmetic itself.
    """
    a = np.bincount(s_idx, w, ns)
    d = np.bincount(p_idx, w, npart)
    b = np.bincount(s_idx * npart + p_idx, w, ns * npart).reshape(ns, npart)
    c = (~free).astype(float)
    cd = c / d
    k = b / d[None, :] - np.outer((b * cd[None, :]).sum(axis=1), cd) / (1.0 + cd.sum())  # B D'⁻¹
    schur = np.diag(a) - np.einsum("jk,ik->ji", k, b)
    try:
        s_inv = np.linalg.inv(schur)
    except np.linalg.LinAlgError:  # a stimulus no rater with ν rated: no information on it
        s_inv = np.linalg.pinv(schur)
    d_inv_diag = 1.0 / d - cd**2 / (1.0 + cd.sum())
    shift = 1.0 / c.sum() ** 2
    var_psi = np.diag(s_inv) - shift
    var_delta = d_inv_diag + np.einsum("ji,jk,ki->i", k, s_inv, k) - shift
    cross = -np.einsum("jk,ki->ji", s_inv, k) + shift
    return var_psi, var_delta, cross


def _fit(values: np.ndarray, s_idx: np.ndarray, p_idx: np.ndarray, ns: int, npart: int, few: np.ndarray,
         floor: float, nu: np.ndarray, max_iter: int, tol: float):
    """Alternating closed-form updates of (ψ, Δ, ν) from a starting ν; ν with its degrees of freedom."""
    n_p = np.bincount(p_idx, minlength=npart).astype(float)
    psi = np.zeros(ns)
    delta = np.zeros(npart)
    nu = nu.copy()
    it = 0
    for it in range(1, max_iter + 1):  # noqa: B007 - the count is reported
        w = 1.0 / nu[p_idx] ** 2
        sw = np.bincount(s_idx, w, ns)
        rated = sw > 0
        new_psi = np.where(rated, np.bincount(s_idx, w * (values - delta[p_idx]), ns) / np.where(rated, sw, 1), 0.0)
        new_delta = np.bincount(p_idx, values - new_psi[s_idx], npart) / n_p
        shift = new_delta[~few].mean()  # identifiability: mean bias 0 over the raters whose ν is estimated
        new_delta -= shift
        new_psi = np.where(rated, new_psi + shift, np.nan)
        resid = values - new_psi[s_idx] - new_delta[p_idx]
        var_psi, var_delta, cross = _covariance(s_idx, p_idx, w, ns, npart, few)
        h = w * (var_psi[s_idx] + var_delta[p_idx] + 2 * cross[s_idx, p_idx])  # leverages
        sq = np.bincount(p_idx, resid**2, npart)
        dof = n_p - np.bincount(p_idx, h, npart)
        new_nu = np.sqrt(sq / np.maximum(dof, 1e-9))
        new_nu[few] = math.sqrt(sq[~few].sum() / max(dof[~few].sum(), 1e-9))
        new_nu = np.maximum(new_nu, floor)
        fin = np.isfinite(new_psi)
        change = max(np.max(np.abs(new_psi[fin] - psi[fin]), initial=0.0), np.max(np.abs(new_delta - delta)),
                     np.max(np.abs(new_nu - nu)))
        psi, delta, nu = new_psi, new_delta, new_nu
        if change < tol:
            break
    var_psi, var_delta, _ = _covariance(s_idx, p_idx, 1.0 / nu[p_idx] ** 2, ns, npart, few)
    return psi, delta, nu, (var_psi, var_delta), it


def subject_model(
    df: pd.DataFrame,
    *,
    stimulus: str = "stimulus",
    rating: str = "rating",
    participant: str = "participant",
    confidence: float = 0.95,
    min_bias: float = 0.5,
    inconsistency_factor: float = 2.0,
    max_iter: int = 500,
    tol: float = 1e-7,
) -> SubjectModel:
    """Fit the Li & Bampis / SUREAL MLE_CO subject model and flag raters.

    Flags: ``straight_liner`` (two or more ratings, all identical); ``harsh`` / ``lenient`` (bias below
    −``min_bias`` / above ``min_bias`` scale points and its CI excluding 0); ``inconsistent`` (ν above
    ``inconsistency_factor`` × the median ν). A rater with a single rating gets the others' pooled ν and is
    never flagged: one rating cannot show a bias.

    Three things keep the quality intervals honest (the issue-40 case: one constant rater's ν fell to the floor,
    took all the weight, and gave 5.1582 ± 0.0005 on a 1–7 scale):

    - **Straight-liners are left out of the fit** (``excluded``). Their ratings do not depend on the stimulus,
      which the model can only read as ν ≈ 0, the most trusted rater: the opposite of the truth. No floor on ν
      fixes that without being an arbitrary weight; like BT.500 / P.913 subject screening, they are removed and
      reported.
    - **ν is estimated with its degrees of freedom** (``ν² = Σ resid² / (n − Σ leverage)``, as REML does): the
      plain MLE divides by n, so a rater whose ratings pull a score towards them looks more consistent, gets more
      weight and pulls harder; with one rating per stimulus and rater that runs away to a single "oracle".
    - **The interval is for the population's score**: ``se² = se_noise² + rater_bias_sd² / raters``, where
      ``se_noise`` comes from the model's information (as SUREAL reports it) and the second term is the chance
      that the raters sampled are on average harsher or more lenient than the population (their mean bias is
      fixed at 0, so it lands in every ψ). ``rater_bias_sd`` is the biases' spread minus their estimation noise.
    """
    _require(df, stimulus, rating, participant)
    values_all = pd.to_numeric(df[rating], errors="coerce").to_numpy(dtype=float)
    if np.isnan(values_all).any():
        raise RatingsError(f"ratings: non-numeric value(s) in {rating!r}")
    s_all = df[stimulus].astype(str).to_numpy()
    p_all = df[participant].astype(str).to_numpy()
    s_names = np.unique(s_all)
    p_names_all, p_inv = np.unique(p_all, return_inverse=True)
    if len(p_names_all) < 2:
        raise RatingsError("subject_model: needs at least two raters")
    n_all = np.bincount(p_inv, minlength=len(p_names_all))
    sd_all = pd.Series(values_all).groupby(p_inv).std(ddof=0).reindex(range(len(p_names_all))).to_numpy()
    straight_all = (n_all >= 2) & (sd_all == 0)
    excluded = tuple(str(p) for p in p_names_all[straight_all])
    keep_rows = ~straight_all[p_inv]
    values, s_kept, p_kept = values_all[keep_rows], s_all[keep_rows], p_all[keep_rows]
    s_idx = np.searchsorted(s_names, s_kept)
    p_names, p_idx = np.unique(p_kept, return_inverse=True)
    ns, npart = len(s_names), len(p_names)
    n_p = np.bincount(p_idx, minlength=npart).astype(float)
    # A rater with one rating fits it exactly (their bias is that rating's residual), so their ν cannot be
    # estimated: they get the pooled ν of the others and take no part in the mean-bias constraint.
    few = n_p < 2
    if npart < 2 or int((~few).sum()) < 2:
        left = f" ({len(excluded)} straight-liner(s) left out: {', '.join(excluded)})" if excluded else ""
        raise RatingsError(f"subject_model: needs at least two raters with at least two ratings each{left}")
    spread = float(values.std()) or 1.0
    floor = 1e-3 * spread  # ν floor: only against division by zero (the dof correction prevents the run-away)

    psi, delta, nu, cov, it = _fit(values, s_idx, p_idx, ns, npart, few, floor, np.full(npart, spread), max_iter,
                                   tol)
    resid = values - psi[s_idx] - delta[p_idx]
    loglik = float(np.sum(-np.log(nu[p_idx]) - 0.5 * math.log(2 * math.pi) - resid**2 / (2 * nu[p_idx] ** 2)))
    core = ~few
    n_core = int(core.sum())
    # delete-one-rater jackknife: every rater with ν estimated left out in turn (warm-started from this fit)
    replicates = []
    if n_core >= 3:
        for r in np.flatnonzero(core):
            rows = p_idx != r
            others = np.delete(np.arange(npart), r)
            remap = np.full(npart, -1)
            remap[others] = np.arange(npart - 1)
            jpsi = _fit(values[rows], s_idx[rows], remap[p_idx[rows]], ns, npart - 1, few[others], floor,
                        nu[others], max_iter, tol)[0]
            replicates.append(jpsi)
    var_psi, var_delta = cov
    delta_se = np.sqrt(np.maximum(var_delta, 0.0))
    bias_var = max(0.0, float(np.var(delta[core], ddof=1)) - float(np.mean(delta_se[core] ** 2)))
    se_model = np.sqrt(np.maximum(var_psi, 0.0))
    n_s = np.bincount(s_idx, minlength=ns)
    if replicates:
        reps = np.array(replicates)
        psi_se = np.sqrt((n_core - 1) / n_core * np.nansum((reps - np.nanmean(reps, axis=0)) ** 2, axis=0))
        crit = stats.t.ppf(0.5 + confidence / 2, n_core - 1)
    else:  # two raters: no jackknife; the model's SE with the rater-sampling term
        psi_se = np.sqrt(se_model**2 + bias_var / n_core)
        crit = stats.t.ppf(0.5 + confidence / 2, 1)
    zc = stats.norm.ppf(0.5 + confidence / 2)
    psi_se = np.where(n_s > 0, psi_se, np.nan)
    stim = pd.DataFrame({
        "stimulus": s_names, "quality": psi, "se": psi_se, "ci_low": psi - crit * psi_se,
        "ci_high": psi + crit * psi_se, "n": n_s, "se_model": np.where(n_s > 0, se_model, np.nan),
    })
    raw_sd = pd.Series(values).groupby(p_idx).std(ddof=0).reindex(range(npart)).to_numpy()
    clear = (np.abs(delta) > zc * delta_se) & ~few  # one rating says nothing about a rater's bias
    median_nu = float(np.median(nu[~few]))
    raters = pd.DataFrame({
        "participant": p_names, "bias": delta, "bias_se": delta_se, "bias_ci_low": delta - zc * delta_se,
        "bias_ci_high": delta + zc * delta_se, "inconsistency": nu, "n": n_p.astype(int), "sd": raw_sd,
        "straight_liner": False, "excluded": False, "harsh": clear & (delta <= -min_bias),
        "lenient": clear & (delta >= min_bias), "inconsistent": (nu > inconsistency_factor * median_nu) & ~few,
    })
    if excluded:
        # where a straight-liner sits against the fitted scores (their bias), for the report; no ν, no flags
        flat_rows = straight_all[p_inv]
        flat_p, flat_s = p_all[flat_rows], np.searchsorted(s_names, s_all[flat_rows])
        offs = pd.Series(values_all[flat_rows] - psi[flat_s]).groupby(flat_p).mean()
        flat = pd.DataFrame({
            "participant": list(excluded), "bias": [float(offs.get(p, np.nan)) for p in excluded],
            "bias_se": np.nan, "bias_ci_low": np.nan, "bias_ci_high": np.nan, "inconsistency": np.nan,
            "n": [int(n_all[list(p_names_all).index(p)]) for p in excluded], "sd": 0.0, "straight_liner": True,
            "excluded": True, "harsh": False, "lenient": False, "inconsistent": False,
        })
        raters = pd.concat([raters, flat], ignore_index=True).sort_values("participant", ignore_index=True)
    return SubjectModel(stimuli=stim, raters=raters, iterations=it, log_likelihood=loglik, excluded=excluded,
                        rater_bias_sd=math.sqrt(bias_var), interval="jackknife" if replicates else "model")


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
