"""Psychometric function fits for yes/no and nAFC data: a Bayesian grid posterior in psignifit's style.

ψ(x) = γ + (1 − γ − λ)·S(x; m, w) with S a core sigmoid (``analysis.sigmoids``), threshold ``m`` at a
chosen proportion of the core rise, width ``w`` (the 5 %-95 % rise), lapse λ and guess γ (fixed 1/n for
nAFC; fixed or free within bounds for yes/no). Overdispersion is a beta-binomial likelihood whose
parameter η (the spread of the true proportion around ψ, psignifit's η) is marginalised on the grid.

Why a grid and not bootstrap: the posterior over (m, w, λ, γ, η) evaluated on a coarse grid, then again on
a fine grid inside the region that holds the mass, gives percentile intervals for every parameter and for
any derived quantity (the level where ψ reaches 75 %, say) by marginalising that quantity over the same
grid, with no refits. Vectorised in numpy it takes tens of milliseconds where psignifit's default grid
(12.8 million points for yes/no) takes seconds. The priors are psignifit's defaults, so the two agree on
the same data (tests/analysis/test_psychometric.py checks it).

Goodness of fit is the binomial deviance at the MAP fit, with a parametric-bootstrap p value whose
refits are a single matrix product over the fine grid (the grid maximum stands in for the MLE, for the
observed data and every resample alike).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from scipy import optimize, special

from analysis.sigmoids import Sigmoid

EXPERIMENTS = ("yes/no", "2AFC", "3AFC", "4AFC")
# Overdispersion η: a spike at 0 (plain binomial) with prior mass ETA_SPIKE, plus psignifit's Beta(1, 10) slab
# over η > 0 on a fixed grid. Seven blocks of 20-50 trials carry almost no information about η (the posterior
# slab mass moves from 0.49 to 0.55 between binomial data and η = 0.15, benchmarks/analysis.py), so the spike
# weight, not the data, sets how much the threshold interval widens for possible overdispersion. The slab alone
# (psignifit) covers 97-98.8 % on binomial data, the spike alone 89.5-91 % on η = 0.15 data; no fixed weight meets
# 95 % on both. 0.7 (was 0.5): 1,000 data sets per design give 96.2-98.5 % binomial, 93.4 % overdispersed
# (docs/analysis.md, "Validation").
ETA_SPIKE = 0.7
ETA_GRID = (np.array([0.0, 0.1, 0.3]), np.array([0.0, 0.06, 0.14, 0.26, 0.45]))

# (coarse, fine) grid steps per parameter
_STEPS = {
    "m": (25, 36),
    "w": (25, 30),
    "lapse": (6, 9),
    "guess": (6, 8),
}


@dataclass(frozen=True)
class FitOptions:
    """What to fit. ``guess``/``lapse`` set to a number fix them; ``None`` frees them within the bounds."""

    sigmoid: str = "logistic"
    experiment: str = "yes/no"
    log_axis: bool = False
    decreasing: bool = False
    guess: float | None = None
    lapse: float | None = None
    guess_bounds: tuple[float, float] = (0.0, 0.5)
    lapse_bounds: tuple[float, float] = (0.0, 0.5)
    overdispersion: bool = True
    pc: float = 0.5
    alpha: float = 0.05
    ci: float = 0.95
    deviance_samples: int = 200
    seed: int = 0

    def __post_init__(self):
        if self.experiment not in EXPERIMENTS:
            raise ValueError(f"unknown experiment {self.experiment!r}; choose one of {', '.join(EXPERIMENTS)}")
        if not 0 < self.ci < 1:
            raise ValueError("ci must lie strictly between 0 and 1")
        for name in ("guess_bounds", "lapse_bounds"):
            lo, hi = getattr(self, name)
            if not 0 <= lo <= hi < 1:
                raise ValueError(f"{name} must satisfy 0 <= low <= high < 1")
        Sigmoid(self.sigmoid, self.pc, self.alpha)  # validates the family

    @property
    def uses_log_axis(self) -> bool:
        return self.log_axis or self.sigmoid == "weibull"

    @property
    def fixed_guess(self) -> float | None:
        if self.experiment != "yes/no":
            return 1.0 / int(self.experiment[0])
        return self.guess


@dataclass(frozen=True)
class Axis:
    """Maps stimulus levels to the fitting axis z (log if asked, negated for a falling curve) and back."""

    log: bool = False
    decreasing: bool = False

    def forward(self, x):
        x = np.asarray(x, dtype=float)
        if self.log:
            if np.any(x <= 0):
                raise ValueError("a log axis needs positive levels")
            x = np.log(x)
        return -x if self.decreasing else x

    def inverse(self, z):
        z = np.asarray(z, dtype=float)
        z = -z if self.decreasing else z
        with np.errstate(over="ignore"):
            return np.exp(z) if self.log else z


@dataclass(frozen=True)
class Data:
    """Aggregated blocks: one row per distinct level."""

    levels: np.ndarray
    n_positive: np.ndarray
    n_total: np.ndarray

    @property
    def n_trials(self) -> int:
        return int(self.n_total.sum())


def aggregate(levels, n_positive, n_total) -> Data:
    """Pool blocks of the same level and check counts (integers, 0 <= positive <= total)."""
    levels = np.asarray(levels, dtype=float)
    k = np.asarray(n_positive, dtype=float)
    n = np.asarray(n_total, dtype=float)
    if not (levels.shape == k.shape == n.shape) or levels.ndim != 1:
        raise ValueError("levels, n_positive and n_total must be 1-d arrays of equal length")
    if not np.all(np.isfinite(levels)):
        raise ValueError("levels must be finite numbers")
    if np.any(k != np.round(k)) or np.any(n != np.round(n)) or np.any(k < 0) or np.any(k > n):
        raise ValueError("counts must be integers with 0 <= n_positive <= n_total")
    uniq, inv = np.unique(levels, return_inverse=True)
    kk = np.bincount(inv, weights=k, minlength=len(uniq))
    nn = np.bincount(inv, weights=n, minlength=len(uniq))
    keep = nn > 0
    return Data(uniq[keep], kk[keep], nn[keep])


def aggregate_trials(levels, responses) -> Data:
    """Aggregate single trials (response 0/1) into blocks."""
    r = np.asarray(responses, dtype=float)
    if np.any((r != 0) & (r != 1)):
        raise ValueError("responses must be 0 or 1")
    return aggregate(levels, r, np.ones_like(r))


# --- priors (psignifit 4 defaults) ------------------------------------------------------------------------


def _threshold_prior(m, lo, hi):
    sp = hi - lo
    m = np.asarray(m, dtype=float)
    p = np.where((m > lo) & (m < hi), 1.0, 0.0)
    left = (m >= lo - sp / 2) & (m <= lo)
    right = (m >= hi) & (m <= hi + sp / 2)
    p = np.where(left, (1 + np.cos(2 * np.pi * (lo - m) / sp)) / 2, p)
    return np.where(right, (1 + np.cos(2 * np.pi * (m - hi) / sp)) / 2, p)


def _width_prior(w, wmin, wmax, alpha):
    y = np.asarray(w, dtype=float) * (special.ndtri(0.95) - special.ndtri(0.05)) / (
        special.ndtri(1 - alpha) - special.ndtri(alpha)
    )
    p = np.where((y > 2 * wmin) & (y < wmax), 1.0, 0.0)
    left = (y >= wmin) & (y <= 2 * wmin)
    right = (y >= wmax) & (y <= 3 * wmax)
    p = np.where(left, (1 - np.cos(np.pi * (y - wmin) / wmin)) / 2, p)
    return np.where(right, (1 + np.cos(np.pi / 2 * (y - wmax) / wmax)) / 2, p)


def _beta_1_10(x):
    x = np.asarray(x, dtype=float)
    return np.where((x >= 0) & (x < 1), 10.0 * np.power(np.clip(1 - x, 0, 1), 9), 0.0)


def _log(p):
    with np.errstate(divide="ignore"):
        return np.log(p)


# --- the grid ---------------------------------------------------------------------------------------------


@dataclass
class _Problem:
    z: np.ndarray
    k: np.ndarray
    n: np.ndarray
    sigmoid: Sigmoid
    bounds: dict
    priors: dict
    free: dict = field(default_factory=dict)


def _problem(data: Data, opts: FitOptions, axis: Axis) -> _Problem:
    z = axis.forward(data.levels)
    order = np.argsort(z)
    z, k, n = z[order], data.n_positive[order], data.n_total[order]
    zu = np.unique(z)
    if len(zu) < 2:
        raise ValueError("a psychometric fit needs at least two distinct levels")
    lo, hi = float(zu[0]), float(zu[-1])
    spread = hi - lo
    wmin = float(np.diff(zu).min())
    a = opts.alpha
    width_span = (special.ndtri(0.95) - special.ndtri(0.05)) / (special.ndtri(1 - a) - special.ndtri(a))
    bounds = {
        "m": (lo - spread / 2, hi + spread / 2),
        "w": (wmin, 3 * spread / width_span),
        "lapse": (opts.lapse, opts.lapse) if opts.lapse is not None else opts.lapse_bounds,
        "guess": (opts.fixed_guess,) * 2 if opts.fixed_guess is not None else opts.guess_bounds,
        "eta": (0.0, ETA_GRID[1][-1]) if opts.overdispersion else (0.0, 0.0),
    }
    priors = {
        "m": lambda v: _threshold_prior(v, lo, hi),
        "w": lambda v: _width_prior(v, wmin, spread, opts.alpha),
        "lapse": _beta_1_10,
        "guess": _beta_1_10,
        "eta": _beta_1_10,
    }
    sig = Sigmoid(opts.sigmoid, opts.pc, opts.alpha)
    return _Problem(z, k, n, sig, bounds, priors)


def _axes(bounds: dict, which: int) -> dict:
    out = {}
    for name, (lo, hi) in bounds.items():
        if name == "eta":
            out[name] = ETA_GRID[which] if hi > lo else np.array([0.0])
            continue
        steps = _STEPS[name][which]
        out[name] = np.array([lo]) if math.isclose(lo, hi) else np.linspace(lo, hi, steps)
    return out


def _trapezoid_weights(values: np.ndarray) -> np.ndarray:
    if len(values) == 1:
        return np.ones(1)
    d = np.empty_like(values)
    d[1:] = np.diff(values)
    d[0] = d[1] / 2
    d[-1] = d[-1] / 2
    return d


def _psi_grid(pb: _Problem, ax: dict) -> np.ndarray:
    """ψ over the grid, shape (M, W, Λ, Γ, L)."""
    s = pb.sigmoid(pb.z[None, None, :], ax["m"][:, None, None], ax["w"][None, :, None])
    lam = ax["lapse"][:, None, None]
    gam = ax["guess"][None, :, None]
    scale = 1.0 - lam - gam  # (Λ, Γ, 1)
    psi = gam + scale * s[:, :, None, None, :]
    return np.clip(psi, 1e-12, 1 - 1e-12)


def _loglik_grid(pb: _Problem, psi: np.ndarray, etas: np.ndarray) -> np.ndarray:
    """Log likelihood over the grid, shape (M, W, Λ, Γ, H) for H overdispersion values."""
    k, n = pb.k, pb.n
    out = np.empty(psi.shape[:-1] + (len(etas),))
    binom = np.log(psi) @ k + np.log1p(-psi) @ (n - k)
    for i, eta in enumerate(etas):
        if eta <= 1e-9:
            out[..., i] = binom
            continue
        nu = 1.0 / eta**2 - 1.0
        a = psi * nu
        b = nu - a
        ll = special.gammaln(k + a) - special.gammaln(a) + special.gammaln(n - k + b) - special.gammaln(b)
        out[..., i] = ll.sum(-1) + float(np.sum(special.gammaln(nu) - special.gammaln(n + nu)))
    return out


def _eta_weights(etas: np.ndarray) -> np.ndarray:
    """Prior mass per η node: the spike at 0, then the Beta(1, 10) slab spread over the other nodes."""
    if len(etas) == 1:
        return np.ones(1)
    edges = np.concatenate([[0.0], (etas[1:-1] + etas[2:]) / 2, [1.0]])
    slab = np.diff(-np.power(1 - edges, 10))  # Beta(1, 10) mass of each node's cell
    return np.concatenate([[ETA_SPIKE], (1 - ETA_SPIKE) * slab / slab.sum()])


def _posterior(pb: _Problem, ax: dict) -> tuple[np.ndarray, np.ndarray]:
    """Normalised posterior mass on the grid (integration weights included) and the log posterior."""
    psi = _psi_grid(pb, ax)
    lp = _loglik_grid(pb, psi, ax["eta"])
    names = ("m", "w", "lapse", "guess", "eta")
    weights = np.ones(1)
    for i, name in enumerate(names):
        shape = [1] * 5
        shape[i] = -1
        if name == "eta":
            weights = weights * _eta_weights(ax[name]).reshape(shape)
            continue
        prior = pb.priors[name](ax[name]) if len(ax[name]) > 1 else np.ones(1)
        lp = lp + _log(prior).reshape(shape)
        weights = weights * _trapezoid_weights(ax[name]).reshape(shape)
    peak = np.max(lp)
    mass = np.exp(lp - peak) * weights
    return mass / mass.sum(), lp


def _tighten(ax: dict, mass: np.ndarray, floor: float = 1e-5) -> dict:
    """psignifit's moving bounds: the grid box holding every cell with mass >= floor, one cell wider."""
    idx = np.nonzero(mass >= floor)
    out = {}
    for i, name in enumerate(("m", "w", "lapse", "guess", "eta")):
        vals = ax[name]
        if len(vals) == 1:
            out[name] = (vals[0], vals[0])
            continue
        if name == "eta":  # a fixed grid, not tightened
            out[name] = (0.0, float(ETA_GRID[1][-1]))
            continue
        left = max(int(idx[i].min()) - 1, 0) if len(idx[i]) else 0
        right = min(int(idx[i].max()) + 1, len(vals) - 1) if len(idx[i]) else len(vals) - 1
        out[name] = (float(vals[left]), float(vals[right]))
    return out


# --- summaries --------------------------------------------------------------------------------------------


def _cell_quantiles(values: np.ndarray, mass: np.ndarray, qs) -> np.ndarray:
    """Quantiles of a grid marginal, spreading each node's mass over its cell (piecewise-linear CDF)."""
    if len(values) == 1:
        return np.full(len(qs), values[0])
    edges = np.concatenate([[values[0]], (values[1:] + values[:-1]) / 2, [values[-1]]])
    cdf = np.concatenate([[0.0], np.cumsum(mass)])
    cdf /= cdf[-1]
    return np.interp(qs, cdf, edges)


def _weighted_quantiles(values: np.ndarray, mass: np.ndarray, qs) -> np.ndarray:
    """Quantiles of a derived quantity sampled on the grid (values may be ±inf)."""
    values = values.ravel()
    mass = mass.ravel()
    keep = mass > 0
    values, mass = values[keep], mass[keep]
    order = np.argsort(values, kind="stable")
    values, mass = values[order], mass[order]
    cdf = np.cumsum(mass) - mass / 2
    cdf /= mass.sum()
    finite = np.isfinite(values)
    out = []
    for q in qs:
        i = int(np.searchsorted(cdf, q))
        if i <= 0:
            out.append(values[0])
        elif i >= len(values):
            out.append(values[-1])
        elif finite[i] and finite[i - 1]:
            t = (q - cdf[i - 1]) / (cdf[i] - cdf[i - 1])
            out.append(values[i - 1] + t * (values[i] - values[i - 1]))
        else:
            out.append(values[i])
    return np.asarray(out, dtype=float)


def _core_level(pb: _Problem, p: float, m, w, lapse, guess):
    """Level z where ψ reaches p; -inf if ψ starts above p, +inf if it never reaches it."""
    scale = 1.0 - lapse - guess
    s = (p - guess) / scale
    with np.errstate(invalid="ignore", divide="ignore"):
        z = pb.sigmoid.inverse(np.clip(s, 1e-300, 1 - 1e-16), m, w)
    z = np.where(s <= 0, -np.inf, z)
    return np.where(s >= 1, np.inf, z)


@dataclass
class FitResult:
    """A fitted psychometric function. Levels and thresholds are in the caller's units."""

    threshold: float
    threshold_ci_95: tuple[float, float]
    width: float
    width_ci: tuple[float, float]
    slope: float
    guess: float
    lapse: float
    eta: float
    deviance: float
    deviance_p: float | None
    n_trials: int
    n_levels: int
    options: FitOptions
    _pb: _Problem = field(repr=False)
    _axes: dict = field(repr=False)
    _mass: np.ndarray = field(repr=False)
    _axis: Axis = field(repr=False)
    map_params: dict = field(default_factory=dict, repr=False)

    def threshold_at(self, p: float, *, of: str = "psi") -> tuple[float, tuple[float, float]]:
        """Level where ψ (``of="psi"``) or the core sigmoid (``of="core"``) reaches ``p``, with its own CI.

        The interval marginalises that level over the posterior grid, so it is direct, not a bound.
        """
        if not 0 < p < 1:
            raise ValueError("p must lie strictly between 0 and 1")
        pb, ax = self._pb, self._axes
        mass = self._mass.sum(axis=4)  # over η
        m, w = ax["m"][:, None, None, None], ax["w"][None, :, None, None]
        lam, gam = ax["lapse"][None, None, :, None], ax["guess"][None, None, None, :]
        if of == "core":
            z = np.broadcast_to(pb.sigmoid.inverse(p, m, w), mass.shape)
            point = pb.sigmoid.inverse(p, self._map["m"], self._map["w"])
        elif of == "psi":
            z = np.broadcast_to(_core_level(pb, p, m, w, lam, gam), mass.shape)
            mp = self._map
            point = _core_level(pb, p, mp["m"], mp["w"], mp["lapse"], mp["guess"])
        else:
            raise ValueError("of must be 'psi' or 'core'")
        tail = (1 - self.options.ci) / 2
        lo, hi = _weighted_quantiles(z, mass, (tail, 1 - tail))
        return self._to_levels(float(point), lo, hi)

    def _to_levels(self, point, lo, hi):
        a, b, c = (float(v) for v in self._axis.inverse(np.array([point, lo, hi])))
        return a, (min(b, c), max(b, c))

    @property
    def _map(self) -> dict:
        return self.map_params

    def psi(self, levels):
        """Fitted ψ at the given levels (caller's units)."""
        mp = self._map
        z = self._axis.forward(levels)
        return mp["guess"] + (1 - mp["guess"] - mp["lapse"]) * self._pb.sigmoid(z, mp["m"], mp["w"])

    def to_dict(self) -> dict:
        """A JSON-ready summary (the ``fit_curve --json`` interface)."""
        o = self.options
        return {
            "threshold": self.threshold,
            "threshold_ci_95": list(self.threshold_ci_95),
            "threshold_pc": o.pc,
            "width": self.width,
            "width_ci_95": list(self.width_ci),
            "slope": self.slope,
            "guess": self.guess,
            "lapse": self.lapse,
            "eta": self.eta,
            "deviance": self.deviance,
            "deviance_p": self.deviance_p,
            "n_trials": self.n_trials,
            "n_levels": self.n_levels,
            "sigmoid": o.sigmoid,
            "experiment": o.experiment,
            "log_axis": o.uses_log_axis,
            "decreasing": o.decreasing,
            "width_units": "log level" if o.uses_log_axis else "level",
        }


# --- MAP and deviance -------------------------------------------------------------------------------------


def _neg_log_post(pb: _Problem, names, fixed: dict):
    def f(theta):
        p = dict(fixed)
        p.update(zip(names, theta))
        psi = p["guess"] + (1 - p["guess"] - p["lapse"]) * pb.sigmoid(pb.z, p["m"], p["w"])
        psi = np.clip(psi, 1e-12, 1 - 1e-12)
        if p["eta"] > 1e-9:
            nu = 1 / p["eta"] ** 2 - 1
            a, b = psi * nu, (1 - psi) * nu
            ll = np.sum(
                special.gammaln(pb.k + a) - special.gammaln(a) + special.gammaln(pb.n - pb.k + b)
                - special.gammaln(b) + special.gammaln(nu) - special.gammaln(pb.n + nu)
            )
        else:
            ll = float(pb.k @ np.log(psi) + (pb.n - pb.k) @ np.log1p(-psi))
        lp = ll
        for name in names:
            lp += float(_log(pb.priors[name](p[name])))
        return -lp if np.isfinite(lp) else 1e300

    return f


def _maximise(pb: _Problem, ax: dict, lp: np.ndarray) -> dict:
    start_idx = np.unravel_index(int(np.argmax(lp)), lp.shape)
    names = ("m", "w", "lapse", "guess", "eta")
    start = {n: float(ax[n][i]) for n, i in zip(names, start_idx)}
    free = [n for n in names if len(ax[n]) > 1 and n != "eta"]  # η stays at its best grid node (spike or slab)
    fixed = {n: start[n] for n in names if n not in free}
    bounds = [pb.bounds[n] for n in free]
    bounds = [(lo, hi) if n != "w" else (lo * 0.5, hi) for n, (lo, hi) in zip(free, bounds)]
    f = _neg_log_post(pb, free, fixed)
    x0 = [start[n] for n in free]
    res = optimize.minimize(f, x0, method="Nelder-Mead", bounds=bounds,
                            options={"xatol": 1e-6, "fatol": 1e-8, "maxiter": 2000})
    best = res.x if res.fun <= f(x0) else np.asarray(x0)
    out = dict(fixed)
    out.update({n: float(v) for n, v in zip(free, best)})
    return out


def _saturated(k, n):
    with np.errstate(divide="ignore", invalid="ignore"):
        p = np.where(n > 0, k / n, 0.5)
        return float(np.sum(special.xlogy(k, p) + special.xlogy(n - k, 1 - p)))


def _deviance(k, n, psi) -> float:
    psi = np.clip(psi, 1e-12, 1 - 1e-12)
    return 2 * (_saturated(k, n) - float(k @ np.log(psi) + (n - k) @ np.log1p(-psi)))


def _deviance_p(pb: _Problem, ax: dict, psi_hat: np.ndarray, samples: int, seed: int) -> float:
    """P(D* >= D) with D the grid-minimised deviance, for binomial resamples from the fitted ψ."""
    sub = {"m": ax["m"][::2], "w": ax["w"][::2], "lapse": ax["lapse"], "guess": ax["guess"], "eta": ax["eta"][:1]}
    psi = _psi_grid(pb, sub).reshape(-1, len(pb.z))
    lpsi, l1m = np.log(psi).T, np.log1p(-psi).T  # (L, G)
    rng = np.random.default_rng(seed)
    ks = rng.binomial(pb.n.astype(int), np.clip(psi_hat, 0, 1), size=(samples, len(pb.n))).astype(float)
    ks = np.vstack([pb.k[None, :], ks])
    devs = np.empty(len(ks))
    for start in range(0, len(ks), 64):
        kk = ks[start:start + 64]
        ll = (kk @ lpsi + (pb.n - kk) @ l1m).max(axis=1)
        sat = np.array([_saturated(row, pb.n) for row in kk])
        devs[start:start + 64] = 2 * (sat - ll)
    return float((np.sum(devs[1:] >= devs[0] - 1e-9) + 1) / (samples + 1))


# --- the fit ----------------------------------------------------------------------------------------------


def fit(data: Data, options: FitOptions | None = None) -> FitResult:
    """Fit ψ to aggregated data and summarise the posterior (threshold, width, CIs, deviance)."""
    opts = options or FitOptions()
    axis = Axis(log=opts.uses_log_axis, decreasing=opts.decreasing)
    if data.n_trials == 0:
        raise ValueError("no trials to fit")
    pb = _problem(data, opts, axis)
    coarse = _axes(pb.bounds, 0)
    mass, _ = _posterior(pb, coarse)
    fine = _axes(_tighten(coarse, mass), 1)
    mass, lp = _posterior(pb, fine)
    mp = _maximise(pb, fine, lp)

    tail = (1 - opts.ci) / 2
    qs = (tail, 1 - tail)
    m_lo, m_hi = _cell_quantiles(fine["m"], mass.sum(axis=(1, 2, 3, 4)), qs)
    w_lo, w_hi = _cell_quantiles(fine["w"], mass.sum(axis=(0, 2, 3, 4)), qs)
    thr = axis.inverse(np.array([mp["m"], m_lo, m_hi]))
    slope = (1 - mp["guess"] - mp["lapse"]) * float(pb.sigmoid.derivative(mp["m"], mp["m"], mp["w"]))
    psi_hat = mp["guess"] + (1 - mp["guess"] - mp["lapse"]) * pb.sigmoid(pb.z, mp["m"], mp["w"])
    dev = _deviance(pb.k, pb.n, psi_hat)
    dev_p = _deviance_p(pb, fine, psi_hat, opts.deviance_samples, opts.seed) if opts.deviance_samples > 0 else None
    result = FitResult(
        threshold=float(thr[0]),
        threshold_ci_95=(float(min(thr[1], thr[2])), float(max(thr[1], thr[2]))),
        width=float(mp["w"]),
        width_ci=(float(w_lo), float(w_hi)),
        slope=slope,
        guess=float(mp["guess"]),
        lapse=float(mp["lapse"]),
        eta=float(mp["eta"]),
        deviance=dev,
        deviance_p=dev_p,
        n_trials=data.n_trials,
        n_levels=len(data.levels),
        options=opts,
        _pb=pb,
        _axes=fine,
        _mass=mass,
        _axis=axis,
        map_params=mp,
    )
    return result


def simulate(rng: np.random.Generator, levels, n_per_level: int, *, m: float, w: float, sigmoid: str = "logistic",
             guess: float = 0.0, lapse: float = 0.0, eta: float = 0.0, log_axis: bool = False,
             decreasing: bool = False) -> Data:
    """Simulated observer: blocks of ``n_per_level`` trials, beta-binomial when ``eta`` > 0.

    ``m`` and ``w`` are on the fitting axis (log levels for a log axis), as the fit reports its width.
    """
    axis = Axis(log=log_axis or sigmoid == "weibull", decreasing=decreasing)
    z = axis.forward(levels)
    p = guess + (1 - guess - lapse) * Sigmoid(sigmoid)(z, m, w)
    if eta > 0:
        nu = 1 / eta**2 - 1
        p = rng.beta(np.maximum(p * nu, 1e-9), np.maximum((1 - p) * nu, 1e-9))
    n = np.full(len(z), n_per_level)
    return aggregate(levels, rng.binomial(n, p), n)


def summary(result: FitResult) -> dict:
    """Alias of ``FitResult.to_dict`` for callers that prefer a function."""
    return result.to_dict()


__all__ = ["Axis", "Data", "FitOptions", "FitResult", "aggregate", "aggregate_trials", "fit", "simulate", "summary"]
