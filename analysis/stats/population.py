"""Population acceptability: the level at which a given share of users accept, from a hierarchical fit.

Researchers ask "at what rate do 75 % of users find the stream acceptable?". That is a quantile of the
population's threshold distribution, not the mean of individual thresholds: if thresholds vary between
people, the 75 % point lies above the mean (for a rate; below it for TTFT) by 0.674 population SDs.

Model: participant i's threshold m_i ~ Normal(μ, σ) on the fitting axis (log axis if asked, negated for a
falling curve such as TTFT, so "acceptable" always means z >= m_i); a shared width, lapse and guess; a
binomial likelihood per block. The marginal likelihood integrates each m_i out numerically
and is maximised with scipy (a GLMM in all but name, fitted by direct integration rather than Laplace). The
integral over each m_i runs on a fixed dense grid of thresholds (Gauss-Hermite nodes centred on μ miss the
narrow individual likelihoods when σ is large against the width, which inflates σ).

The point estimates (μ, σ and the q point μ + Φ⁻¹(q)·σ) are restricted ("REML-type") maximum likelihood ones:
the likelihood carries the Cox-Reid adjustment for μ, + ½·log I_μμ (μ's information at fixed σ, read from the
same grid weights), which is exact REML for normal individual likelihoods. Plain maximum likelihood divides the
spread by n, not n − 1, and put the 75 % point 3 % of the curve's width low at 12 participants.

The intervals are the plain likelihood's, calibrated for n participants: the q point's is the profile-likelihood
interval cut at t²/2, t the Student-t quantile on n − 1 degrees of freedom, an F(1, n − 1) calibration of the
likelihood ratio ("profile-t"); μ's is the Wald interval with that t quantile, or the profile-t interval where σ
sits at or near its lower bound (the participants agree, and the information on log σ vanishes, so the Wald
interval is absent or runs off the threshold grid). With 12 participants the delta-method (Wald) interval on
(μ, log σ) covered 89-90 %, the profile interval with the χ²₁ cut 92.7 %, and the profile of the REML-adjusted
likelihood 94 % with the χ²₁ cut and 97 % with the t cut (docs/analysis.md, "Population acceptability").
σ's interval is its own profile-likelihood interval with the same cut (0 at the low end where the answers cannot
tell σ from zero). ``reml=False`` gives pipeline version 6's fit: maximum likelihood points, the same intervals.
Per-condition tables and a sentence for the report come at the end.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import optimize, special, stats

from analysis.stats import clustered
from analysis.stats.logspace import logsumexp
from analysis.stats.psychometric import Axis, FitOptions, aggregate, fit
from analysis.stats.psychometric import blocks as psy_blocks
from analysis.stats.sigmoids import Sigmoid


class CensoredError(ValueError):
    """The population's thresholds lie beyond the tested levels: the answers cannot place its quantile."""


@dataclass(frozen=True)
class PopulationResult:
    """A hierarchical fit for one group of participants. Levels are in the caller's units."""

    quantile: float
    quantile_level: float
    quantile_ci_95: tuple[float, float]
    mu_level: float
    mu_ci_95: tuple[float, float]
    sigma: float
    width: float
    lapse: float
    guess: float
    mean_individual_threshold: float | None
    n_participants: int
    n_trials: int
    converged: bool
    # the quantile's interval: "profile-t" (profile likelihood cut at t²(n − 1)/2); results of earlier versions
    # say "delta" (Wald on μ, log σ, normal quantile) or "profile" (profile likelihood cut at χ²₁/2)
    interval_method: str = "profile-t"
    # the point estimates (μ, σ, the q point): "reml" (the Cox–Reid adjusted likelihood) or "ml" (reml=False, and
    # results of pipeline version 6 and earlier)
    estimation: str = "reml"
    # σ's interval (axis units, as σ): the profile-t interval; a lower end of 0 where the answers cannot tell σ from
    # zero, an upper end of inf where they do not bound it
    sigma_ci_95: tuple[float, float] = (float("nan"), float("nan"))
    log_axis: bool = False
    # the individual fits behind ``mean_individual_threshold``: how many, how many of them lie beyond the levels
    # tested (their value is the prior's), and why there is no mean when there is none
    n_individual: int = 0
    individual_beyond: int = 0
    individual_note: str | None = None
    # the population-averaged core sigmoid (lapse and guess left out) at the lowest and the highest level on the
    # fitting axis: far from 0 and 1, the levels do not reach the curve's ends, and the guess or lapse rate is told
    # from the spread of thresholds only by the curve's shape
    reach: tuple[float, float] = (float("nan"), float("nan"))

    def columns(self) -> dict:
        """The fit's keys of a per-condition row, as ``fit_by_condition`` and the pipeline both store them."""
        return {
            "n_participants": self.n_participants,
            "n_trials": self.n_trials,
            "quantile": self.quantile,
            "population_q": self.quantile_level,
            "population_q_ci_low": self.quantile_ci_95[0],
            "population_q_ci_high": self.quantile_ci_95[1],
            "population_q_ci_method": self.interval_method,
            "population_estimation": self.estimation,
            "population_mu": self.mu_level,
            "population_mu_ci_low": self.mu_ci_95[0],
            "population_mu_ci_high": self.mu_ci_95[1],
            "population_sigma": self.sigma,
            "population_sigma_ci_low": self.sigma_ci_95[0],
            "population_sigma_ci_high": self.sigma_ci_95[1],
            # σ is on the fitting axis: natural-log units of the level on a log axis, the level's unit otherwise
            "population_sigma_scale": "ln" if self.log_axis else "level",
            "log_axis": self.log_axis,
            "mean_individual_threshold": self.mean_individual_threshold,
            "n_individual": self.n_individual,
            "individual_beyond": self.individual_beyond,
            "individual_note": self.individual_note,
            "population_reach_low": self.reach[0],
            "population_reach_high": self.reach[1],
        }


def _columns(df: pd.DataFrame) -> pd.DataFrame:
    """Blocks (participant, level, n_positive, n_total) from trial or aggregated rows."""
    if "participant" not in df.columns or "level" not in df.columns:
        raise ValueError("data need columns participant and level")
    if {"n_positive", "n_total"} <= set(df.columns):
        blocks = df[["participant", "level", "n_positive", "n_total"]].copy()
    elif "response" in df.columns:
        r = df["response"].astype(float)
        if not r.isin([0.0, 1.0]).all():
            raise ValueError("column response must hold 0 or 1")
        blocks = pd.DataFrame({"participant": df["participant"], "level": df["level"].astype(float),
                               "n_positive": r, "n_total": 1.0})
    else:
        raise ValueError("data need columns response, or n_positive and n_total")
    return blocks.groupby(["participant", "level"], as_index=False, sort=True)[["n_positive", "n_total"]].sum()


def _guess_lapse(opts: FitOptions):
    fixed_guess = opts.fixed_guess
    lapse_hi = opts.lapse_bounds[1] if opts.lapse is None else None
    return fixed_guess, lapse_hi


def _unpack(theta, fixed_guess, opts: FitOptions, floor: float = 0.0):
    """(μ, σ, width, lapse, guess) from the optimiser's free vector; σ = floor + exp(θ₁), so the σ reported is
    the σ the likelihood used (below the threshold grid's spacing the integral cannot resolve it)."""
    mu, log_sigma, log_w = theta[0], theta[1], theta[2]
    i = 3
    if opts.lapse is None:
        lo, hi = opts.lapse_bounds
        lapse = lo + (hi - lo) * special.expit(theta[i])
        i += 1
    else:
        lapse = opts.lapse
    if fixed_guess is None:
        lo, hi = opts.guess_bounds
        guess = lo + (hi - lo) * special.expit(theta[i])
    else:
        guess = fixed_guess
    return mu, floor + np.exp(log_sigma), np.exp(log_w), lapse, guess


@dataclass(frozen=True)
class _Data:
    """One group's answers on the fitting axis, and the grid of thresholds the model integrates over."""

    blocks: pd.DataFrame
    axis: Axis
    z: np.ndarray
    n_total: np.ndarray
    n_people: int
    zu: np.ndarray  # the distinct levels on the fitting axis
    yes: np.ndarray  # (participants, distinct levels)
    no: np.ndarray
    grid: np.ndarray
    step: float
    spread: float


def _data(df: pd.DataFrame, opts: FitOptions, nodes: int) -> _Data:
    blocks = _columns(df)
    axis = Axis(log=opts.uses_log_axis, decreasing=opts.decreasing)
    z = axis.forward(blocks["level"].to_numpy(float))
    k = blocks["n_positive"].to_numpy(float)
    n = blocks["n_total"].to_numpy(float)
    codes, people = pd.factorize(blocks["participant"], sort=True)
    n_people = len(people)
    if n_people < 2:
        raise ValueError("a population fit needs at least two participants")
    if len(np.unique(z)) < 2:
        raise ValueError("a population fit needs at least two distinct levels")
    zu, level_of = np.unique(z, return_inverse=True)
    spread = float(zu[-1] - zu[0])
    grid = np.linspace(zu[0] - spread, zu[-1] + spread, nodes)
    # each participant's yes and no answers per distinct level: ψ depends on the level only, so the binomial
    # log likelihood of every participant at every grid threshold is two (participants × levels) @ (levels × grid)
    # products over ψ at the distinct levels, not a log per answer row and grid node
    yes = np.zeros((n_people, len(zu)))
    no = np.zeros((n_people, len(zu)))
    np.add.at(yes, (codes, level_of), k)
    np.add.at(no, (codes, level_of), n - k)
    return _Data(blocks=blocks, axis=axis, z=z, n_total=n, n_people=n_people, zu=zu, yes=yes, no=no, grid=grid,
                 step=grid[1] - grid[0], spread=spread)


def _negative_log_likelihood(d: _Data, opts: FitOptions, fixed_guess):
    """The marginal negative log likelihood of θ (``_unpack``); ``reml=True`` adds the Cox–Reid adjustment."""
    sig = Sigmoid(opts.sigmoid, opts.pc, opts.alpha)
    core_args = (d.zu[:, None], d.grid[None, :])
    grid, step, spread, yes, no = d.grid, d.step, d.spread, d.yes, d.no

    def nll(theta, reml=False):
        # the profiles' searches reach widths and spreads that over- or underflow: those points are refused (1e300)
        with np.errstate(over="ignore", under="ignore", divide="ignore", invalid="ignore"):
            mu, sigma, w, lapse, guess = _unpack(theta, fixed_guess, opts, step)
            psi = guess + (1 - guess - lapse) * sig(*core_args, w)
            psi = np.clip(psi, 1e-12, 1 - 1e-12)  # (levels, G)
            per = yes @ np.log(psi) + no @ np.log1p(-psi)  # (participants, G)
            log_prior = -0.5 * ((grid - mu) / sigma) ** 2
            log_prior = log_prior - logsumexp(log_prior)  # normalised on the grid
            joint = per + log_prior[None, :]
            marginal = logsumexp(joint, axis=-1)
            val = -float(np.sum(marginal))
            if reml:
                val += 0.5 * _log_mu_information(joint, marginal, log_prior, grid, sigma, spread)
        return val if np.isfinite(val) else 1e300

    def value_and_grad(theta):
        """The plain (``reml=False``) value and its exact gradient in θ, from the same grid posterior: each of
        BFGS's steps costs one evaluation rather than one per parameter for finite differences."""
        theta = np.asarray(theta, dtype=float)
        with np.errstate(over="ignore", under="ignore", divide="ignore", invalid="ignore"):
            mu, sigma, w, lapse, guess = _unpack(theta, fixed_guess, opts, step)
            core = sig(*core_args, w)  # (levels, G)
            amp = 1 - guess - lapse
            raw = guess + amp * core
            psi = np.clip(raw, 1e-12, 1 - 1e-12)
            per = yes @ np.log(psi) + no @ np.log1p(-psi)
            dev = grid - mu
            log_prior = -0.5 * (dev / sigma) ** 2
            log_prior = log_prior - logsumexp(log_prior)
            joint = per + log_prior[None, :]
            marginal = logsumexp(joint, axis=-1)
            val = -float(np.sum(marginal))
            if not np.isfinite(val):
                return 1e300, np.zeros_like(theta)
            post = np.exp(joint - marginal[:, None])  # (participants, G), each row sums to 1
            weight = post.sum(axis=0)  # (G,)
            prior = np.exp(log_prior)
            people = float(yes.shape[0])
            grad = np.zeros_like(theta)
            # the prior: d log prior / dμ = dev/σ² less its prior mean (the normalisation on the grid)
            dmu = dev / sigma**2
            grad[0] = -(weight @ dmu - people * (prior @ dmu))
            dsig = dev**2 / sigma**3
            grad[1] = -(weight @ dsig - people * (prior @ dsig)) * (sigma - step)
            # ψ: d Σ log marginal / dψ at each level and node, zero where ψ was clipped
            dpsi = (yes.T @ post) / psi - (no.T @ post) / (1 - psi)
            dpsi = np.where(raw == psi, dpsi, 0.0)
            dcore_dlogw = sig.log_width_derivative(*core_args, w)
            grad[2] = -amp * float(np.sum(dpsi * dcore_dlogw))
            i = 3
            if opts.lapse is None:
                lo, hi = opts.lapse_bounds
                e = special.expit(theta[i])
                grad[i] = float(np.sum(dpsi * core)) * (hi - lo) * e * (1 - e)
                i += 1
            if fixed_guess is None:
                lo, hi = opts.guess_bounds
                e = special.expit(theta[i])
                grad[i] = -float(np.sum(dpsi * (1 - core))) * (hi - lo) * e * (1 - e)
        if not np.all(np.isfinite(grad)):
            return 1e300, np.zeros_like(theta)
        return val, grad

    nll.value_and_grad = value_and_grad
    return nll



def _maximise(f, start, value_and_grad=None):
    """The minimum of a smooth negative log likelihood: quasi-Newton (BFGS; exact gradients with
    ``value_and_grad``, finite differences without) from the start, checked by a simplex search from where it
    stopped when BFGS reports no convergence (a flat or refused region), keeping the better of the two."""
    res = _minimise(f, start, gtol=1e-5, value_and_grad=value_and_grad)
    if res.success:
        return res
    simplex = optimize.minimize(f, res.x, method="Nelder-Mead",
                                options={"xatol": 1e-5, "fatol": 1e-7, "maxiter": 4000, "maxfev": 8000})
    return simplex if simplex.fun < res.fun else res


def _minimise(f, start, gtol: float = 1e-4, value_and_grad=None):
    """BFGS on the optimiser's free vector (``value_and_grad(θ) -> (value, gradient)`` if given, else finite
    differences of ``f``); a stop for lost precision at a point where the gradient is small is the minimum (the
    gradient cannot get smaller), so it counts as success."""
    x0 = np.asarray(start, dtype=float)
    if value_and_grad is not None:
        res = optimize.minimize(value_and_grad, x0, jac=True, method="BFGS", options={"gtol": gtol})
    else:
        res = optimize.minimize(f, x0, method="BFGS", options={"gtol": gtol})
    if not res.success and np.all(np.isfinite(res.jac)) and np.max(np.abs(res.jac)) < 100 * gtol:
        res.success = True
    return res


# the logit of a free lapse or guess rate at which a search (re)starts at most: a rate on its bound at the best
# fit has run off to a logit of −20 to −40, where its gradient (∝ e^logit) is nil and a profile's search started
# there never moves it, though away from the best fit the likelihood wants the rate above the bound (issue 40:
# the edge design's q point interval ended 3 % short because of it)
_RATE_LOGIT = 8.0


def _unsaturated(start, first_rate: int):
    """A search's start with the free rates' logits (entries from ``first_rate`` on) brought within
    ±``_RATE_LOGIT``."""
    start = np.array(start, dtype=float)
    start[first_rate:] = np.clip(start[first_rate:], -_RATE_LOGIT, _RATE_LOGIT)
    return start


def _lowest(f, value_and_grad, *starts):
    """The lower of the minima reached from each start. A profile's nuisance parameters can have two minima (σ at
    its floor, everyone alike, or a spread of thresholds with a lapse rate): started only from the nearest point
    solved, the search stays on one branch, the profile jumps where the nearest point changes branch, and the
    interval's end lands on the jump (issue 40). The best fit's nuisance values are the second start."""
    distinct = [s for i, s in enumerate(starts) if not any(np.array_equal(s, t) for t in starts[:i])]
    results = [_minimise(f, s, value_and_grad=value_and_grad) for s in distinct]
    return min(results, key=lambda r: float(r.fun))


def _start(d: _Data, opts: FitOptions, fixed_guess) -> list[float]:
    start = [float(np.median(d.z)), np.log(d.spread / 4 - d.step), np.log(d.spread / 2)]
    if opts.lapse is None:
        start.append(-1.5)
    if fixed_guess is None:
        start.append(-1.5)
    return start


def _censored(d: _Data, quantile: float) -> CensoredError:
    """The error for thresholds beyond the tested levels; which side is read from the answers (mostly yes: below
    the levels), not from the optimiser's point, which the flat likelihood out there leaves anywhere."""
    below = float(d.yes.sum()) >= float(d.no.sum())
    lo, hi = sorted(float(v) for v in d.axis.inverse(d.zu[[0, -1]]))
    return CensoredError(f"nearly every answer was {'yes' if below else 'no'!r}: the population's thresholds "
                         f"lie beyond the tested levels ({lo:g}-{hi:g}), so its {100 * quantile:g} % point "
                         f"cannot be estimated")


def _intervals(d: _Data, nll, ml, opts: FitOptions, fixed_guess, quantile: float, mu: float,
               sigma_interval: bool) -> tuple[tuple[float, float], tuple[float, float], tuple[float, float]]:
    """The 95 % intervals of the q point, μ and σ (level units; σ on the fitting axis): the plain likelihood's,
    calibrated for n participants by the t(n − 1) quantile."""
    zq = float(special.ndtri(quantile))
    step, spread, zu, grid, axis = d.step, d.spread, d.zu, d.grid, d.axis
    theta = ml.x
    sigma_ml = _unpack(theta, fixed_guess, opts, step)[1]
    cov = _covariance(nll.value_and_grad, theta)
    dsigma = sigma_ml - step  # dσ/dθ₁
    var_mu = cov[0, 0]
    with np.errstate(invalid="ignore", over="ignore"):  # a singular information matrix (a rate on its bound): inf
        var_q = cov[0, 0] + 2 * zq * dsigma * cov[0, 1] + (zq * dsigma) ** 2 * cov[1, 1]
    # n participants, n − 1 degrees of freedom for the spread between them: with few people the χ²₁ (normal)
    # calibration is too short (12 people: 89 % for a 95 % Wald interval), as it is for a sample's mean
    t_ci = float(stats.t.ppf(0.5 + opts.ci / 2, d.n_people - 1))

    def half_width(var):
        return t_ci * np.sqrt(max(var, 0.0)) if np.isfinite(var) else np.inf

    def profiled(z_of_sd, half):
        point_z = theta[0] + z_of_sd * sigma_ml
        ends = _profile_interval(nll, theta, z_of_sd, float(ml.fun), spread, step, t_ci**2 / 2, half)
        # beyond the tested levels with no limit on how far (all yes, or all no): the data only say "beyond"
        if point_z < zu[0] and np.isinf(ends[0]) or point_z > zu[-1] and np.isinf(ends[1]):
            raise _censored(d, quantile)
        lo, hi = axis.inverse(np.array(ends))
        return (float(min(lo, hi)), float(max(lo, hi)))

    # the quantile: the Wald interval misses mostly above (σ estimated low, a symmetric interval); the profile
    # follows the likelihood's skew. The Wald half-width only seeds the profile's search for its ends
    q_ci = profiled(zq, half_width(var_q))
    # μ: the Wald interval, which stands on a quadratic log likelihood; one that runs off the grid the model
    # integrates over (σ near its floor, where log σ is barely informed) shows that the quadratic has failed, and
    # with σ at its lower bound (people agree) the information on log σ vanishes: the profile still has an interval
    half = half_width(var_mu)
    if np.isfinite(half) and dsigma > 0.01 * step and grid[0] <= mu - half and mu + half <= grid[-1]:
        lo, hi = axis.inverse(np.array([mu - half, mu + half]))
        mu_ci = (float(min(lo, hi)), float(max(lo, hi)))
    else:
        mu_ci = profiled(0.0, half)
    sigma_ci = _profile_sigma(nll, theta, float(ml.fun), step, t_ci**2 / 2) if sigma_interval else (np.nan, np.nan)
    return q_ci, mu_ci, sigma_ci


def _individual_mean(d: _Data, opts: FitOptions, lapse: float, guess: float
                     ) -> tuple[float | None, int, int, str | None]:
    """Each participant's own fit (points only), with lapse and guess fixed at the model's (a few dozen answers
    cannot place them): the mean of their thresholds on the fitting axis (a geometric mean on a log axis, as μ
    is), how many were fitted, how many lie beyond the levels, and why there is none."""
    fitted, beyond = [], 0
    ind_opts = FitOptions(sigmoid=opts.sigmoid, experiment=opts.experiment, log_axis=opts.log_axis,
                          decreasing=opts.decreasing, guess=None if opts.experiment != "yes/no" else guess,
                          lapse=lapse,
                          guess_bounds=opts.guess_bounds, lapse_bounds=opts.lapse_bounds,
                          pc=opts.pc, alpha=opts.alpha, deviance_samples=0,
                          bartlett_samples=0)  # only the points are read
    for _, g in d.blocks.groupby("participant", sort=True):
        if g["level"].nunique() < 2:
            continue
        r = fit(aggregate(g["level"], g["n_positive"], g["n_total"]), ind_opts, intervals=False)
        fitted.append(float(d.axis.forward(r.threshold)))
        beyond += r.beyond_levels is not None
    mean_ind = float(d.axis.inverse(np.mean(fitted))) if fitted else None
    return mean_ind, len(fitted), beyond, None if fitted else "no participant saw two or more levels"


def fit_population(df: pd.DataFrame, options: FitOptions | None = None, *, quantile: float = 0.75,
                   nodes: int = 241, individual: bool = True, reml: bool = True,
                   sigma_interval: bool = True) -> PopulationResult:
    """Fit the hierarchical model to one group; ``individual`` also fits each participant for the naive mean,
    ``reml=False`` maximises the plain marginal likelihood (σ biased low with few participants),
    ``sigma_interval=False`` leaves σ's profile interval out (NaN; a benchmark of the quantile need not pay for it)."""
    opts = options or FitOptions(lapse_bounds=(0.0, 0.2), guess_bounds=(0.0, 0.2))
    if not 0 < quantile < 1:
        raise ValueError("quantile must lie strictly between 0 and 1")
    d = _data(df, opts, nodes)
    fixed_guess, _ = _guess_lapse(opts)
    nll = _negative_log_likelihood(d, opts, fixed_guess)
    ml = _maximise(nll, _start(d, opts, fixed_guess), nll.value_and_grad)
    # the point estimates: σ from the restricted likelihood (maximum likelihood's σ is low with few people)
    res = _maximise(lambda th: nll(th, reml=True), _unsaturated(ml.x, 3)) if reml else ml
    mu, sigma, w, lapse, guess = _unpack(res.x, fixed_guess, opts, d.step)
    q_point = mu + float(special.ndtri(quantile)) * sigma
    # thresholds run off the grid the model integrates over: any number would be the optimiser's, not the data's
    if not d.grid[0] <= mu <= d.grid[-1] or not d.grid[0] <= q_point <= d.grid[-1]:
        raise _censored(d, quantile)
    q_ci, mu_ci, sigma_ci = _intervals(d, nll, ml, opts, fixed_guess, quantile, mu, sigma_interval)
    mean_ind, n_ind, beyond, note = _individual_mean(d, opts, lapse, guess) if individual else (
        None, 0, 0, "individual fits not run")
    return PopulationResult(
        reach=_reach(d, opts, mu, sigma, w),
        quantile=quantile,
        quantile_level=float(d.axis.inverse(q_point)),
        quantile_ci_95=q_ci,
        mu_level=float(d.axis.inverse(mu)),
        mu_ci_95=mu_ci,
        sigma=float(sigma),
        width=float(w),
        lapse=float(lapse),
        guess=float(guess),
        mean_individual_threshold=mean_ind,
        n_participants=d.n_people,
        n_trials=int(d.n_total.sum()),
        converged=bool(res.success and ml.success),
        estimation="reml" if reml else "ml",
        sigma_ci_95=sigma_ci,
        log_axis=d.axis.log,
        n_individual=n_ind,
        individual_beyond=beyond,
        individual_note=note,
    )


def _reach(d: _Data, opts: FitOptions, mu: float, sigma: float, width: float) -> tuple[float, float]:
    """The population-averaged core sigmoid at the lowest and the highest level (``PopulationResult.reach``)."""
    x, wts = np.polynomial.hermite_e.hermegauss(41)
    core = Sigmoid(opts.sigmoid, opts.pc, opts.alpha)(d.zu[[0, -1]][:, None], (mu + sigma * x)[None, :], width)
    low, high = core @ (wts / wts.sum())
    return float(low), float(high)


def _log_mu_information(joint: np.ndarray, marginal: np.ndarray, log_prior: np.ndarray, grid: np.ndarray,
                        sigma: float, sigma_cap: float = np.inf) -> float:
    """log of the observed information on μ at fixed (σ, width, lapse, guess), Σᵢ (Var_prior − Var_postᵢ) / σ⁴:
    each participant's marginal likelihood's curvature in μ, read from the same grid weights (no extra likelihood
    evaluations). Half of it is the Cox–Reid adjustment that turns the likelihood of σ into a REML-like one.

    The σ⁴ is taken at no more than ``sigma_cap`` (the fit passes the levels' spread): as σ outgrows the grid the
    thresholds are integrated on, the prior flattens on it and the likelihood stops depending on σ, and a term
    falling as −2·log σ would then pull σ on to infinity (answers all one way, where the likelihood is flat in σ)."""
    post = np.exp(joint - marginal[:, None])
    mean_post = post @ grid
    var_post = post @ grid**2 - mean_post**2
    prior = np.exp(log_prior)
    var_prior = float(prior @ grid**2 - (prior @ grid) ** 2)
    total = float(np.sum(np.maximum(var_prior - var_post, 0.0)))
    return float(np.log(max(total, 1e-300)) - 4.0 * np.log(min(sigma, sigma_cap)))


def _profile_interval(nll, theta, zq: float, best: float, spread: float, floor: float, cut: float,
                      scale: float = np.inf) -> tuple[float, float]:
    """Profile-likelihood interval of q = μ + zq·σ on the fitting axis: the q whose negative log likelihood,
    minimised over σ, width, lapse and guess with μ = q − zq·σ, lies within ``cut`` of the best fit (χ²₁(ci)/2,
    or t²(ci; n − 1)/2 for a small-sample calibration); σ = floor + exp(θ₁), as in the fit. ``scale``, the Wald
    half-width if there is one, is where the search for each end starts (the spread of the levels / 20 if not)."""
    theta = np.asarray(theta, dtype=float)
    q_hat = float(theta[0] + zq * (floor + np.exp(theta[1])))
    target = np.sqrt(2 * cut)
    solved = {q_hat: (theta[1:], -target)}  # q -> (profile's nuisance parameters, signed root − target)

    def signed(q: float) -> float:
        """√(2·(profile − best)) − √(2·cut), signed: nearly linear in q (a straight line for a quadratic log
        likelihood), so the root finder needs few steps; negative inside the interval. Each value is one
        optimisation, started from the nearest q solved so far."""
        if q in solved:
            return solved[q][1]
        start = _unsaturated(solved[min(solved, key=lambda v: abs(v - q))][0], 2)  # (θ₁, log w, rates)

        def f(r):
            with np.errstate(over="ignore", invalid="ignore"):  # BFGS's trial steps can reach σ = inf: refused
                return nll(np.concatenate([[q - zq * (floor + np.exp(r[0]))], r]))

        def fg(r):
            with np.errstate(over="ignore", invalid="ignore"):
                value, g = nll.value_and_grad(np.concatenate([[q - zq * (floor + np.exp(r[0]))], r]))
                out = g[1:].copy()
                out[0] -= g[0] * zq * np.exp(r[0])  # μ = q − zq·σ moves with θ₁
            return value, (out if np.all(np.isfinite(out)) else np.zeros_like(out))

        r = _lowest(f, fg, start, _unsaturated(theta[1:], 2))
        value = float(np.sqrt(2 * max(float(r.fun) - best, 0.0))) - target
        solved[q] = (r.x, value)
        return value

    first = float(np.clip(1.25 * scale, spread / 100, spread)) if np.isfinite(scale) else spread / 20
    ends = []
    for sign in (-1.0, 1.0):
        # step out until the profile has dropped by the cut, aiming past the crossing the root's slope so far
        # predicts, then find the crossing between the last q inside and the first outside
        step = first
        inner, outer = q_hat, q_hat + sign * step
        value = signed(outer)
        while value < 0 and step < 4 * spread:
            inner = outer
            reached = value + target  # the signed root at ``outer``, target − |value|
            step *= float(np.clip(1.25 * target / reached, 1.25, 2.0)) if reached > 0 else 2.0
            outer = q_hat + sign * step
            value = signed(outer)
        ends.append(sign * np.inf if value < 0 else optimize.brentq(signed, inner, outer, xtol=spread * 1e-4))
    return ends[0], ends[1]


def _profile_sigma(nll, theta, best: float, floor: float, cut: float) -> tuple[float, float]:
    """Profile-likelihood interval of σ (θ₁ = log(σ − floor)): the σ whose negative log likelihood, minimised over
    μ, width, lapse and guess, lies within ``cut`` of the best fit. The search runs on θ₁, where the profile is
    close to symmetric; a lower end below the threshold grid's spacing is reported as 0 (the answers cannot tell
    the spread from none), an upper end beyond a factor e⁸ of σ̂ as inf (they do not bound it)."""
    theta = np.asarray(theta, dtype=float)
    t_hat = float(theta[1])
    rest = np.delete(theta, 1)
    solved = {t_hat: (rest, -np.sqrt(2 * cut))}

    def signed(t: float) -> float:
        if t in solved:
            return solved[t][1]
        start = _unsaturated(solved[min(solved, key=lambda v: abs(v - t))][0], 2)  # (μ, log w, rates)

        def f(r):
            return nll(np.concatenate([r[:1], [t], r[1:]]))

        def fg(r):
            value, g = nll.value_and_grad(np.concatenate([r[:1], [t], r[1:]]))
            return value, np.delete(g, 1)

        r = _lowest(f, fg, start, _unsaturated(rest, 2))
        value = float(np.sqrt(2 * max(float(r.fun) - best, 0.0))) - np.sqrt(2 * cut)
        solved[t] = (r.x, value)
        return value

    ends = []
    for sign in (-1.0, 1.0):
        step, inner = 0.25, t_hat
        outer = t_hat + sign * step
        while signed(outer) < 0 and step < 8:
            inner, step = outer, step * 2
            outer = t_hat + sign * step
        if signed(outer) < 0:
            ends.append(0.0 if sign < 0 else np.inf)
            continue
        t_end = optimize.brentq(signed, min(inner, outer), max(inner, outer), xtol=1e-3)
        sigma_end = floor + float(np.exp(t_end))
        ends.append(0.0 if sign < 0 and sigma_end <= 2 * floor else sigma_end)
    return float(ends[0]), float(ends[1])


def _covariance(value_and_grad, theta, rel: float = 1e-4) -> np.ndarray:
    """Inverse of the Hessian of the negative log likelihood, by central differences of its exact gradient."""
    theta = np.asarray(theta, dtype=float)
    d = len(theta)
    h = rel * np.maximum(np.abs(theta), 1.0) * 10
    hess = np.empty((d, d))
    for i in range(d):
        e = np.zeros(d)
        e[i] = h[i]
        hess[:, i] = (value_and_grad(theta + e)[1] - value_and_grad(theta - e)[1]) / (2 * h[i])
    hess = (hess + hess.T) / 2
    try:
        return np.linalg.inv(hess)
    except np.linalg.LinAlgError:
        return np.full((d, d), np.inf)


class Likelihood:
    """The population model's likelihood of one group's answers at fixed lapse and guess, as a function of the
    population's μ, σ (on the fitting axis) and the shared width: the function ``fit_population`` maximises (the same
    threshold grid, σ floor and Cox–Reid term), for callers that integrate it rather than maximise it
    (``analysis.stats.population_draws``). ``df`` as for ``fit_population``; ``options`` must fix lapse and guess."""

    def __init__(self, df: pd.DataFrame, options: FitOptions, *, nodes: int = 241):
        if options.lapse is None or options.fixed_guess is None:
            raise ValueError("the likelihood of (μ, σ, width) needs lapse and guess fixed in the options")
        self._group = _data(df, options, nodes)
        self._nll = _negative_log_likelihood(self._group, options, options.fixed_guess)

    @property
    def grid(self) -> np.ndarray:
        """The thresholds the individual ones are integrated over (the tested range once more on each side)."""
        return self._group.grid

    @property
    def step(self) -> float:
        """The grid's spacing: the smallest σ the likelihood resolves (the fit's floor on σ)."""
        return self._group.step

    @property
    def spread(self) -> float:
        """The tested levels' range on the fitting axis."""
        return self._group.spread

    def negative_log_likelihood(self, mu: float, sigma: float, width: float, *, reml: bool = False) -> float:
        """The marginal negative log likelihood at (μ, σ ≥ ``step``, width); ``reml`` adds the Cox–Reid term,
        ½ log of μ's information. 1e300 where it over- or underflows, as in the fit."""
        with np.errstate(divide="ignore"):
            log_excess = np.log(max(sigma - self.step, 0.0))  # θ₁ of ``_unpack``: σ = step + exp(θ₁)
        return self._nll(np.array([mu, log_excess, np.log(width)]), reml)

    def log_mu_information(self, mu: float, sigma: float, width: float) -> float:
        """log of μ's observed information at (μ, σ, width), twice the Cox–Reid term (``_log_mu_information``;
        σ's fourth power taken at no more than the tested range, as in the fit)."""
        return 2.0 * (self.negative_log_likelihood(mu, sigma, width, reml=True)
                      - self.negative_log_likelihood(mu, sigma, width))


def fit_by_condition(df: pd.DataFrame, options: FitOptions | None = None, *, quantile: float = 0.75,
                     individual: bool = True) -> pd.DataFrame:
    """One row per condition: pooled threshold with CI, population q point with CI, mean of individual thresholds.

    The pooled CI is the model's, widened to the participant jackknife's where that reaches further
    (``analysis.stats.clustered``; ``pooled_ci_jackknife_groups`` is 0 with fewer than five participants, or when a
    refit without one group failed, and the model's interval stands).

    ``df`` has columns condition, participant, level and response (0/1) or n_positive/n_total.
    """
    opts = options or FitOptions(lapse_bounds=(0.0, 0.2), guess_bounds=(0.0, 0.2))
    if "condition" not in df.columns:
        raise ValueError("data need a condition column")
    rows = []
    for cond, g in df.groupby("condition", sort=True):
        blocks = _columns(g)
        # one row per (participant, level): the rows' spread is the between-participant part of η
        pooled_opts = FitOptions(**{**opts.__dict__, "deviance_samples": 0})
        pooled = fit(psy_blocks(blocks["level"], blocks["n_positive"], blocks["n_total"]), pooled_opts)
        # one person's rows move together: widen to the participant jackknife where it reaches further
        spread = clustered.spread_keys(blocks["level"], blocks["n_positive"], blocks["n_total"],
                                       blocks["participant"], pooled_opts, pooled)
        pooled_ci = spread["threshold_ci_95"]
        pop = fit_population(g, opts, quantile=quantile, individual=individual)
        rows.append({
            "condition": cond,
            "pooled_threshold": pooled.threshold,
            "pooled_ci_low": pooled_ci[0],
            "pooled_ci_high": pooled_ci[1],
            "pooled_ci_jackknife_groups": spread["cluster"].get("groups", 0),
            **pop.columns(),
        })
    return pd.DataFrame(rows)


def fit_by_participant(df: pd.DataFrame, options: FitOptions | None = None) -> pd.DataFrame:
    """One row per participant: threshold, CI, width, lapse, guess (participants with < 2 levels are skipped)."""
    opts = options or FitOptions(deviance_samples=0)
    blocks = _columns(df)
    rows = []
    for who, g in blocks.groupby("participant", sort=True):
        if g["level"].nunique() < 2:
            continue
        r = fit(aggregate(g["level"], g["n_positive"], g["n_total"]), opts)
        rows.append({"participant": who, "threshold": r.threshold, "ci_low": r.threshold_ci_95[0],
                     "ci_high": r.threshold_ci_95[1], "width": r.width, "lapse": r.lapse, "guess": r.guess,
                     "n_trials": r.n_trials})
    return pd.DataFrame(rows)


def shift_phrase(table: pd.DataFrame, baseline, condition, *, unit: str = "tokens/s",
                 column: str = "population_q") -> str:
    """'condition smooth moves the 75 % point from 21.3 to 17.9 tokens/s (95 % CI ...)', from fit_by_condition."""
    rows = table.set_index("condition")
    if baseline not in rows.index or condition not in rows.index:
        raise KeyError(f"conditions {baseline!r} and {condition!r} must both be in the table")
    a, b = rows.loc[baseline], rows.loc[condition]
    pct = f"{100 * float(b['quantile']):g} %"
    text = f"condition {condition} moves the {pct} point from {a[column]:.3g} to {b[column]:.3g} {unit}"
    if column == "population_q":
        text += (f" (95 % CI {b['population_q_ci_low']:.3g}-{b['population_q_ci_high']:.3g},"
                 f" against {a['population_q_ci_low']:.3g}-{a['population_q_ci_high']:.3g} for {baseline})")
    return text
