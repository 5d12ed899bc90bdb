"""Joint draws of the population model's parameters, from its likelihood, for the perception model file.

The population fit (``analysis.stats.population``) reports each condition's μ and σ with an interval, one at a
time. Scoring a request needs them together, and the run's intervals cannot carry three things: μ and σ of one
condition are correlated; conditions answered by the same participants have errors that move together; and in a
condition with few answers per person σ's likelihood is flat from zero up (the fit puts σ on the grid's floor and
its profile interval is 0 – something, or 0 – ∞), so no normal on log σ describes it. A participant bootstrap
does not either: refits of resamples stay on the floor (it failed there, 5 answers per person and condition).

So the draws come from each condition's likelihood itself, integrated the way the REML-type fit is:
σ is drawn from its likelihood with μ integrated out (Laplace: the profile over μ and the width, plus ½ log of μ's
information, the fit's Cox–Reid term) under a flat prior on σ between the threshold grid's step and the tested
levels' range on the fitting axis (a spread wider than the levels tested is beyond what the design can measure);
then μ given σ from the normal of its conditional likelihood (mean the profile's μ̂(σ), variance 1/information).
σ is evaluated on a grid of values and drawn within a grid cell. Conditions answered by the same people are
coupled: one Gaussian copula per draw with correlation n_shared / √(n_a·n_b) between two conditions (the
correlation of two means over overlapping samples when a person's threshold moves with the condition, as a bot's
does; for people an upper bound, so the coupling errs on the wide side for what conditions are averaged or
interpolated over). The likelihood is ``analysis.stats.population``'s own (``population.Likelihood``: threshold ~
Normal(μ, σ) on the fitting axis, integrated on a fixed grid of 241 thresholds spanning the tested range once more
on each side), with lapse and guess fixed at the run's values. Pure: no Django.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import optimize, special

from analysis.stats import population
from analysis.stats.psychometric import Axis, FitOptions

NODES = 241
DRAWS = 200
SIGMA_POINTS = 40


@dataclass(frozen=True)
class Draws:
    """Per condition (in the order asked), ``draws`` values of μ on the fitting axis and of σ (axis units)."""

    conditions: list[str]
    mu: np.ndarray  # (draws, conditions)
    sigma: np.ndarray  # (draws, conditions)
    sigma_grid: int  # σ values the likelihood was evaluated at, per condition


def _likelihood(frame: pd.DataFrame, row: Mapping, log_axis: bool, decreasing: bool,
                sigmoid: str) -> population.Likelihood:
    """One condition's likelihood, from its answers (participant, level, y) at the run's lapse and guess."""
    options = FitOptions(sigmoid=sigmoid, log_axis=log_axis, decreasing=decreasing,
                         lapse=float(row.get("lapse") or 0.0), guess=float(row.get("guess") or 0.0))
    answers = frame[["participant", "level"]].assign(response=frame["y"].to_numpy(float))
    try:
        return population.Likelihood(answers, options, nodes=NODES)
    except ValueError as exc:
        raise ValueError(f"condition {row['condition']!r}: {exc}") from None


def _profile(like: population.Likelihood, sigma: float, start: np.ndarray) -> tuple[np.ndarray, float, float]:
    """At fixed σ: (μ̂, log width) maximising the likelihood, the integrated negative log likelihood
    (the Cox–Reid adjusted one: nll + ½ log information) and the log of μ's information."""
    res = optimize.minimize(lambda th: like.negative_log_likelihood(th[0], sigma, np.exp(th[1])), start,
                            method="Nelder-Mead", options={"xatol": 1e-4, "fatol": 1e-6, "maxiter": 600})
    mu, width = res.x[0], np.exp(res.x[1])
    return res.x, like.negative_log_likelihood(mu, sigma, width, reml=True), like.log_mu_information(mu, sigma, width)


def _sigma_table(like: population.Likelihood, start_mu: float, points: int) -> tuple[np.ndarray, ...]:
    """σ grid (uniform from the grid's step to the tested range), and per σ: integrated nll, μ̂, μ's SD."""
    step, spread = like.step, like.spread
    sigmas = np.linspace(step, max(spread, 2 * step), points)
    theta = np.array([start_mu, np.log(spread / 2)])
    out = np.empty((points, 3))
    # from the widest σ down: the profile moves smoothly, each optimisation starts from its neighbour's
    for k in range(points - 1, -1, -1):
        theta, integrated, log_info = _profile(like, sigmas[k], theta)
        out[k] = integrated, theta[0], np.exp(-0.5 * log_info) if np.isfinite(log_info) else spread
    return sigmas, out[:, 0], out[:, 1], out[:, 2]


def _overlap(who: Sequence[set[int]]) -> np.ndarray:
    k = len(who)
    r = np.eye(k)
    for i in range(k):
        for j in range(i + 1, k):
            shared = len(who[i] & who[j])
            r[i, j] = r[j, i] = shared / np.sqrt(len(who[i]) * len(who[j])) if shared else 0.0
    return r


def likelihood_draws(data: pd.DataFrame, rows: Sequence[Mapping], *, log_axis: bool, decreasing: bool,
                     sigmoid: str = "logistic", draws: int = DRAWS, seed: int = 0, points: int = SIGMA_POINTS
                     ) -> Draws:
    """Draws of μ and σ for the conditions of ``rows`` (the run's population rows: ``condition``, ``lapse``,
    ``guess``, ``population_mu``) from ``data`` (the block's analysed answers: participant, level, y, condition)."""
    axis = Axis(log=log_axis, decreasing=decreasing)
    people = pd.Index(sorted(data["participant"].astype(str).unique()))
    conds, names, who = [], [], []
    for row in rows:
        frame = data.loc[data["condition"].astype(str) == str(row["condition"])]
        if frame.empty:
            raise ValueError(f"condition {row['condition']!r}: no answers in the data")
        conds.append(_likelihood(frame, row, log_axis, decreasing, sigmoid))
        names.append(str(row["condition"]))
        who.append(set(people.get_indexer(frame["participant"].astype(str).unique()).tolist()))
    rng = np.random.default_rng(seed)
    # two coupled standard normals per condition and draw: one picks σ (through its CDF), one μ given σ
    chol = np.linalg.cholesky(_overlap(who) + 1e-9 * np.eye(len(conds)))
    u_sigma = special.ndtr(rng.standard_normal((draws, len(conds))) @ chol.T)
    z_mu = rng.standard_normal((draws, len(conds))) @ chol.T
    mu = np.empty((draws, len(conds)))
    sigma = np.empty((draws, len(conds)))
    for j, (like, row) in enumerate(zip(conds, rows)):
        start_mu = float(axis.forward(float(row["population_mu"])))
        sigmas, integrated, mu_hat, mu_sd = _sigma_table(like, start_mu, points)
        # the density of σ is piecewise linear between the grid values; its CDF per cell is exact for that
        dens = np.exp(-(integrated - integrated.min()))
        cell = 0.5 * (dens[1:] + dens[:-1]) * np.diff(sigmas)
        cdf = np.concatenate([[0.0], np.cumsum(cell)]) / cell.sum()
        k = np.clip(np.searchsorted(cdf, u_sigma[:, j], side="right") - 1, 0, len(cell) - 1)
        frac = (u_sigma[:, j] - cdf[k]) / np.maximum(cdf[k + 1] - cdf[k], 1e-300)
        sigma[:, j] = sigmas[k] + frac * (sigmas[k + 1] - sigmas[k])
        m = mu_hat[k] + frac * (mu_hat[k + 1] - mu_hat[k])
        sd = mu_sd[k] + frac * (mu_sd[k + 1] - mu_sd[k])
        mu[:, j] = m + sd * z_mu[:, j]
    return Draws(conditions=names, mu=mu, sigma=sigma, sigma_grid=points)


def block_data(trials: pd.DataFrame, participants: pd.DataFrame | None, spec: Mapping | None,
               block: str) -> pd.DataFrame:
    """The answers of one yes/no block as the analysis pipeline fits them (exclusions applied): participant, level,
    y, condition. Empty when the block has none."""
    from analysis.stats import pipeline

    trials, participants, _report = pipeline.apply_rules(trials, participants, spec)
    data = pipeline.analysable(trials)
    for entry in pipeline.yes_no_sets(data, spec):
        if str(entry["block"]) == str(block) and "data" in entry:
            return entry["data"]
    return pd.DataFrame(columns=["participant", "level", "y", "condition"])
