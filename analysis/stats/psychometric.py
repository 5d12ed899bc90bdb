"""Psychometric function fits for yes/no and nAFC data: a Bayesian grid posterior in psignifit's style.

ψ(x) = γ + (1 − γ − λ)·S(x; m, w) with S a core sigmoid (``analysis.stats.sigmoids``), threshold ``m`` at a
chosen proportion of the core rise, width ``w`` (the 5 %-95 % rise), lapse λ and guess γ (fixed 1/n for
nAFC; fixed or free within bounds for yes/no). Overdispersion is a beta-binomial likelihood per data row
(block) whose parameter η (the spread of a row's true proportion around ψ, psignifit's η) is marginalised on the
grid. A level may have several rows (``blocks``: the blocks of a session, the participants of a pooled fit);
their spread is what identifies η.

Why a grid and not bootstrap: the posterior over (m, w, λ, γ, η) evaluated on a coarse grid, then again on
a fine grid inside the region that holds the mass, gives percentile intervals for every parameter and for
any derived quantity (the level where ψ reaches 75 %, say) by marginalising that quantity over the same
grid, with no refits. Vectorised in numpy it takes tens of milliseconds where psignifit's default grid
(12.8 million points for yes/no) takes seconds. The priors are psignifit's defaults, so the two agree on
the same data (tests/analysis/stats/test_psychometric.py checks it with ``interval="posterior"``, psignifit's percentile
interval). The threshold's interval is by default the "hybrid" likelihood interval on the same grid: profiled over
width, lapse and η, the guess rate integrated out under its prior; where the guess rate is fixed (nAFC) its cut is
scaled by a bootstrap Bartlett factor (``analysis.stats.bartlett``). Of the three its coverage of a known threshold
stays closest to 95 % across the validation designs (about 94.1–96.3 %); the posterior interval over-covers where
the guess and lapse rates are weakly identified and its 2AFC misses are lopsided, and the profile interval
under-covers with few trials (docs/analysis.md, "Validation"; the record: docs/validation/coverage.md).

Goodness of fit is the binomial deviance (per row) at the MAP fit, with a parametric-bootstrap p value whose
refits are a single matrix product over the fine grid (the grid maximum stands in for the MLE, for the
observed data and every resample alike).
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, field

import numpy as np
from scipy import optimize, special, stats

from analysis.stats import sigmoids
from analysis.stats.bartlett import bartlett_factor
from analysis.stats.sigmoids import Sigmoid

EXPERIMENTS = ("yes/no", "2AFC", "3AFC", "4AFC")
# threshold intervals: percentiles of the posterior marginal (psignifit's), the profile-likelihood interval, or
# "hybrid": the likelihood-ratio interval of the likelihood profiled over width, lapse and η with the guess rate
# integrated out under its prior (docs/validation/coverage.md, "Fourth round", compares them)
INTERVALS = ("posterior", "profile", "hybrid")
# Overdispersion η: a spike at 0 (plain binomial) with prior mass ETA_SPIKE, plus psignifit's Beta(1, 10) slab
# over η > 0 on a fixed grid. η is per row. With one row per level (seven rows) the data carry almost no
# information about η and this weight alone sets how much the interval widens (0.7 was tuned that way); with the
# trials of a level in several rows, as the pipeline fits them (one row per level and participant), the rows'
# spread identifies η and the weight hardly matters (benchmarks/analysis.py, 4 rows per level: coverage moves by
# at most 1 % between weights 0.3 and 0.9). So a neutral 0.5: no prior preference for or against overdispersion.
ETA_SPIKE = 0.5
ETA_GRID = (np.array([0.0, 0.1, 0.3]), np.array([0.0, 0.06, 0.14, 0.26, 0.45]))

# Larger levels make the grid's sums of squares overflow (the posterior interval came out NaN at 1e200); no stimulus
# level of a study is anywhere near it.
MAX_ABS_LEVEL = 1e100

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
    interval: str = "hybrid"
    # resamples for the hybrid interval's small-sample (Bartlett) correction where the guess rate is fixed (nAFC,
    # or ``guess=`` given); 0 keeps the plain χ²₁ cut (``analysis.stats.bartlett``)
    bartlett_samples: int = 400

    def __post_init__(self):
        if self.interval not in INTERVALS:
            raise ValueError(f"unknown interval {self.interval!r}; choose one of {', '.join(INTERVALS)}")
        if self.bartlett_samples < 0:
            raise ValueError("bartlett_samples must be 0 (no correction) or more")
        self._check()

    def _check(self):
        if self.experiment not in EXPERIMENTS:
            raise ValueError(f"unknown experiment {self.experiment!r}; choose one of {', '.join(EXPERIMENTS)}")
        if not 0 < self.ci < 1:
            raise ValueError("ci must lie strictly between 0 and 1")
        for name in ("guess_bounds", "lapse_bounds"):
            lo, hi = getattr(self, name)
            if not 0 <= lo <= hi < 1:
                raise ValueError(f"{name} must satisfy 0 <= low <= high < 1")
        for name in ("guess", "lapse"):
            value = getattr(self, name)
            if value is not None and not 0 <= value < 1:
                raise ValueError(f"{name} must lie in [0, 1) when fixed (got {value!r}); None frees it")
        guess = self.fixed_guess if self.fixed_guess is not None else self.guess_bounds[0]
        lapse = self.lapse if self.lapse is not None else self.lapse_bounds[0]
        if guess + lapse >= 1:
            raise ValueError(f"guess ({guess:g}) and lapse ({lapse:g}) leave the sigmoid no room to rise: "
                             "their sum must stay below 1")
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
    """Rows of counts ("blocks", psignifit's data rows): a level, its positive answers and its trials.

    ``aggregate`` pools rows of the same level (one row per distinct level); ``blocks`` keeps them, so one
    level may have several rows (the blocks of a session, or one row per participant). The binomial fit is the
    same either way; the overdispersion parameter η is per row, so repeated rows of a level are what lets
    the fit see overdispersion (their spread around ψ against the binomial spread).
    """

    levels: np.ndarray
    n_positive: np.ndarray
    n_total: np.ndarray

    @property
    def n_trials(self) -> int:
        return int(self.n_total.sum())

    @property
    def n_levels(self) -> int:
        return len(np.unique(self.levels))

    def pooled(self) -> Data:
        """One row per distinct level (for plotting the data points)."""
        return aggregate(self.levels, self.n_positive, self.n_total)


def _checked(levels, n_positive, n_total):
    levels = np.asarray(levels, dtype=float)
    k = np.asarray(n_positive, dtype=float)
    n = np.asarray(n_total, dtype=float)
    if not (levels.shape == k.shape == n.shape) or levels.ndim != 1:
        raise ValueError("levels, n_positive and n_total must be 1-d arrays of equal length")
    if not np.all(np.isfinite(levels)):
        raise ValueError("levels must be finite numbers")
    if np.any(k != np.round(k)) or np.any(n != np.round(n)) or np.any(k < 0) or np.any(k > n):
        raise ValueError("counts must be integers with 0 <= n_positive <= n_total")
    return levels, k, n


def aggregate(levels, n_positive, n_total) -> Data:
    """Pool blocks of the same level and check counts (integers, 0 <= positive <= total)."""
    levels, k, n = _checked(levels, n_positive, n_total)
    uniq, inv = np.unique(levels, return_inverse=True)
    kk = np.bincount(inv, weights=k, minlength=len(uniq))
    nn = np.bincount(inv, weights=n, minlength=len(uniq))
    keep = nn > 0
    return Data(uniq[keep], kk[keep], nn[keep])


def blocks(levels, n_positive, n_total) -> Data:
    """Check counts and keep each row as its own block (repeated levels allowed; empty rows dropped).

    Use it when a level's trials come from separate blocks of a session or from different participants:
    η, the overdispersion, is then estimated from how those rows scatter (see ``fit``).
    """
    levels, k, n = _checked(levels, n_positive, n_total)
    order = np.argsort(levels, kind="stable")
    keep = order[n[order] > 0]
    return Data(levels[keep], k[keep], n[keep])


def aggregate_trials(levels, responses) -> Data:
    """Aggregate single trials (response 0/1) into blocks."""
    r = np.asarray(responses, dtype=float)
    if np.any((r != 0) & (r != 1)):
        raise ValueError("responses must be 0 or 1")
    return aggregate(levels, r, np.ones_like(r))


# --- priors (psignifit 4 defaults) ------------------------------------------------------------------------


def _threshold_prior(m, lo, hi):
    sp = hi - lo
    if np.ndim(m) == 0:  # one value (the MAP search's many calls): the same cases without array machinery
        m = float(m)
        if hi <= m <= hi + sp / 2:
            return (1 + math.cos(2 * math.pi * (m - hi) / sp)) / 2
        if lo - sp / 2 <= m <= lo:
            return (1 + math.cos(2 * math.pi * (lo - m) / sp)) / 2
        return 1.0 if lo < m < hi else 0.0
    m = np.asarray(m, dtype=float)
    p = np.where((m > lo) & (m < hi), 1.0, 0.0)
    left = (m >= lo - sp / 2) & (m <= lo)
    right = (m >= hi) & (m <= hi + sp / 2)
    p = np.where(left, (1 + np.cos(2 * np.pi * (lo - m) / sp)) / 2, p)
    return np.where(right, (1 + np.cos(2 * np.pi * (m - hi) / sp)) / 2, p)


@functools.lru_cache(maxsize=64)
def _width_span(alpha: float) -> tuple[float, float]:
    return float(special.ndtri(0.95) - special.ndtri(0.05)), float(special.ndtri(1 - alpha) - special.ndtri(alpha))


def _width_prior(w, wmin, wmax, alpha):
    if np.ndim(w) == 0:  # one value: the same cases without array machinery
        top, bottom = _width_span(float(alpha))
        y = float(w) * top / bottom
        if wmax <= y <= 3 * wmax:
            return (1 + math.cos(math.pi / 2 * (y - wmax) / wmax)) / 2
        if wmin <= y <= 2 * wmin:
            return (1 - math.cos(math.pi * (y - wmin) / wmin)) / 2
        return 1.0 if 2 * wmin < y < wmax else 0.0
    y = np.asarray(w, dtype=float) * (special.ndtri(0.95) - special.ndtri(0.05)) / (
        special.ndtri(1 - alpha) - special.ndtri(alpha)
    )
    p = np.where((y > 2 * wmin) & (y < wmax), 1.0, 0.0)
    left = (y >= wmin) & (y <= 2 * wmin)
    right = (y >= wmax) & (y <= 3 * wmax)
    p = np.where(left, (1 - np.cos(np.pi * (y - wmin) / wmin)) / 2, p)
    return np.where(right, (1 + np.cos(np.pi / 2 * (y - wmax) / wmax)) / 2, p)


def _beta_1_10(x):
    if np.ndim(x) == 0:
        x = float(x)
        return 10.0 * min(max(1 - x, 0.0), 1.0) ** 9 if 0 <= x < 1 else 0.0
    x = np.asarray(x, dtype=float)
    return np.where((x >= 0) & (x < 1), 10.0 * np.power(np.clip(1 - x, 0, 1), 9), 0.0)


def _log(p):
    if isinstance(p, float):
        return math.log(p) if p > 0 else -math.inf
    with np.errstate(divide="ignore"):
        return np.log(p)


# --- the grid ---------------------------------------------------------------------------------------------


def _count_terms(row_level: np.ndarray, counts: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Distinct (level, count > 0) pairs of the rows, with multiplicity, sorted by count, largest first."""
    pos = counts > 0
    pairs, mult = np.unique(np.column_stack([row_level[pos], counts[pos]]), axis=0, return_counts=True)
    order = np.argsort(-pairs[:, 1], kind="stable")
    return pairs[order, 0].astype(int), pairs[order, 1].astype(int), mult[order].astype(float)


@dataclass
class _Problem:
    z: np.ndarray  # per row (block), sorted
    k: np.ndarray
    n: np.ndarray
    sigmoid: Sigmoid
    bounds: dict
    priors: dict
    free: dict = field(default_factory=dict)

    def __post_init__(self):
        self.zu, self.row_level = np.unique(self.z, return_inverse=True)  # distinct levels; row -> level
        self.ku = np.bincount(self.row_level, weights=self.k, minlength=len(self.zu))
        self.nu = np.bincount(self.row_level, weights=self.n, minlength=len(self.zu))
        self.succ = _count_terms(self.row_level, self.k)
        self.fail = _count_terms(self.row_level, self.n - self.k)


def _problem(data: Data, opts: FitOptions, axis: Axis) -> _Problem:
    z = axis.forward(data.levels)
    if np.max(np.abs(z)) > MAX_ABS_LEVEL:
        raise ValueError(f"levels must lie within ±{MAX_ABS_LEVEL:g} on the fitting axis (the grid's products "
                         "overflow beyond); rescale them, or fit on a log axis")
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
        out[name] = np.array([lo]) if lo == hi else np.linspace(lo, hi, steps)  # a fixed rate only
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
    """ψ over the grid at the distinct levels, shape (M, W, Λ, Γ, L)."""
    s = pb.sigmoid(pb.zu[None, None, :], ax["m"][:, None, None], ax["w"][None, :, None])
    lam = ax["lapse"][:, None, None]
    gam = ax["guess"][None, :, None]
    scale = 1.0 - lam - gam  # (Λ, Γ, 1)
    psi = gam + scale * s[:, :, None, None, :]
    return np.clip(psi, 1e-12, 1 - 1e-12)


_CHUNK = 24  # factors multiplied before taking a log (keeps the rising products far from overflow)
_SMALL_GRID = 16_384  # grid points up to which ``_log_rising`` takes every level at once


def _log_rising(a: np.ndarray, terms) -> np.ndarray:
    """Σ_t mult_t · log Γ(a_t + c_t) − log Γ(a_t) over count terms t, as Σ_{i < c_t} log(a_t + i).

    ``a`` has the distinct levels on its first axis; ``terms`` are (level, count, multiplicity). The rising
    product costs a multiplication per trial and a log per distinct count, against two gammaln calls per term (about
    twenty times a multiplication), which is what keeps a fit with many rows per level as fast as one with a row
    per level. The terms of one level share their prefix: its product runs once up to its largest count and is
    read off (a log) at each of its counts. On a small grid (the jackknife's refits, guess and lapse held) every
    level at once, as numpy's per-call cost dominates there: step i multiplies the (levels × grid) products by
    a + i, and the levels with a count of i + 1 add their weighted logs. A large grid goes level by level, each
    level's arrays staying in cache (``_log_rising_chunked``).
    """
    level, count, mult = terms
    out = np.zeros(a.shape[1:])
    if not len(count):
        return out
    if int(count.max()) > _CHUNK or out.size > _SMALL_GRID:
        return _log_rising_chunked(a, terms)
    used = np.unique(level)
    weight = np.zeros((len(used), int(count.max())))
    np.add.at(weight, (np.searchsorted(used, level), count - 1), mult)
    at = a[used].reshape(len(used), -1)
    prod = at.copy()
    factor = np.empty_like(prod)
    flat = out.reshape(-1)
    for i in range(weight.shape[1]):
        if i:
            np.add(at, i, out=factor)
            prod *= factor
        rows = np.nonzero(weight[:, i])[0]
        if len(rows) == len(used):
            flat += (weight[:, i, None] * np.log(prod)).sum(axis=0)
        elif len(rows):
            flat += (weight[rows, i, None] * np.log(prod[rows])).sum(axis=0)
    return out


def _log_rising_chunked(a: np.ndarray, terms) -> np.ndarray:
    """``_log_rising`` level by level, the products logged every 24 factors (far from overflow): counts above 24
    (one row per level holding many trials)."""
    level, count, mult = terms
    out = np.zeros(a.shape[1:])
    factor = np.empty_like(out)
    logged = np.empty_like(out)
    for lv in np.unique(level):
        sel = level == lv
        weight = dict(zip(count[sel].tolist(), mult[sel].tolist()))
        at = a[lv]
        prod = np.ones_like(out)
        base = np.zeros_like(out)  # the logs of the completed chunks of 24 factors
        for i in range(int(count[sel].max())):
            np.add(at, i, out=factor)
            prod *= factor
            if (i + 1) % _CHUNK == 0:
                base += np.log(prod)
                prod[...] = 1.0
            w = weight.get(i + 1)
            if w is not None:
                np.log(prod, out=logged)
                logged += base
                logged *= w
                out += logged
    return out


def _loglik_grid(pb: _Problem, psi: np.ndarray, etas: np.ndarray) -> np.ndarray:
    """Log likelihood over the grid, shape (M, W, Λ, Γ, H) for H overdispersion values.

    Binomial (η = 0): depends only on the pooled counts per level. Beta-binomial (η > 0) per row: the row's
    true proportion is Beta(ψ·ν, (1 − ψ)·ν) with ν = 1/η² − 1 (psignifit's parameterisation), so its count
    has variance n·ψ(1 − ψ)·(1 + (n − 1)·η²).
    """
    out = np.empty(psi.shape[:-1] + (len(etas),))
    binom = np.log(psi) @ pb.ku + np.log1p(-psi) @ (pb.nu - pb.ku)
    lead = np.ascontiguousarray(np.moveaxis(psi, -1, 0))  # (L, grid...), each level's grid contiguous
    for i, eta in enumerate(etas):
        if eta <= 1e-9:
            out[..., i] = binom
            continue
        nu = 1.0 / eta**2 - 1.0
        a = lead * nu
        ll = _log_rising(a, pb.succ) + _log_rising(nu - a, pb.fail)
        out[..., i] = ll + float(np.sum(special.gammaln(nu) - special.gammaln(pb.n + nu)))
    return out


def _eta_weights(etas: np.ndarray) -> np.ndarray:
    """Prior mass per η node: the spike at 0, then the Beta(1, 10) slab spread over the other nodes."""
    if len(etas) == 1:
        return np.ones(1)
    edges = np.concatenate([[0.0], (etas[1:-1] + etas[2:]) / 2, [1.0]])
    slab = np.diff(-np.power(1 - edges, 10))  # Beta(1, 10) mass of each node's cell
    return np.concatenate([[ETA_SPIKE], (1 - ETA_SPIKE) * slab / slab.sum()])


def _posterior(pb: _Problem, ax: dict) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Normalised posterior mass on the grid (integration weights included), the log posterior (η's prior left
    out) and the log likelihood."""
    psi = _psi_grid(pb, ax)
    ll = _loglik_grid(pb, psi, ax["eta"])
    lp = ll
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
    return mass / mass.sum(), lp, ll


_LR_ROOM = 8.0  # log-likelihood units below the coarse maximum kept in the fine box


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


def _profile_cut(ll: np.ndarray, ci: float, scale: float = 1.0) -> float:
    """Wilks: the interval keeps the values whose profile log likelihood is within χ²₁(ci)/2 of the maximum
    (times ``scale``, the Bartlett factor, where one is estimated)."""
    return float(np.max(ll) - scale * stats.chi2.ppf(ci, 1) / 2)


def _shifted(m: np.ndarray, ll: np.ndarray, offset: np.ndarray, q: np.ndarray) -> np.ndarray:
    """``ll`` (M, ...) read along its evenly spaced m axis at m = q − offset for every nuisance column: (Q, ...).

    Linear interpolation between m nodes; past an end of the grid's m range the end node's value (the grid spans
    the levels ± half their spread, where the answers stop moving the likelihood, and the profile interval reads
    a segment still above the cut there as open in the same way); −inf where the offset is infinite. The positions
    are computed on the offset's own shape (it has no η axis) and broadcast over the rest."""
    off = np.asarray(offset, dtype=float)
    if off.ndim != ll.ndim - 1:
        off = np.broadcast_to(off, ll.shape[1:])
    pos = (q.reshape((-1,) + (1,) * off.ndim) - off[None] - m[0]) / (m[1] - m[0])
    outside = ~np.isfinite(pos)
    pos = np.clip(np.where(outside, 0.0, pos), 0, len(m) - 1)
    i0 = np.minimum(pos.astype(int), len(m) - 2)
    t = pos - i0
    y0, y1 = _read_at(ll, i0)
    with np.errstate(invalid="ignore"):
        out = y0 + t * (y1 - y0)
    return np.where(outside, -np.inf, out)


def _read_at(ll: np.ndarray, i0: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """ll at m nodes i0 and i0 + 1 per column, (Q, ...) each. Where i0 has no η axis (the shifts never depend on
    η), ll is laid out column by column with its η values last, and each read takes a column's η values at once."""
    m_n, last = ll.shape[0], ll.shape[-1]
    if i0.shape[1:] != ll.shape[1:-1] + (1,) or last == 1:
        return np.take_along_axis(ll, i0, axis=0), np.take_along_axis(ll, i0 + 1, axis=0)
    cols = int(np.prod(ll.shape[1:-1]))
    by_col = np.ascontiguousarray(np.moveaxis(ll, 0, -2)).reshape(cols * m_n, last)  # (column, m) rows of η
    rows = i0.reshape(len(i0), cols) + (np.arange(cols) * m_n)[None, :]
    shape = (len(i0),) + ll.shape[1:]
    return by_col[rows].reshape(shape), by_col[rows + 1].reshape(shape)


def _log_integral(y: np.ndarray, x: np.ndarray, axis: int) -> np.ndarray:
    """log ∫ exp(y) dx along ``axis`` with log y linear between the nodes ``x`` (exact for exponential pieces).

    A prior times a likelihood falls off about exponentially along a rate such as the guess rate, and the
    trapezoid rule on a few nodes then overstates the integral (by up to a third of a log unit with eight nodes
    on [0, 0.5], tests/analysis/stats/test_psychometric.py checks against adaptive quadrature); integrating the
    exponential through each pair of nodes keeps it within about a tenth. The price: a peak between two nodes is
    cut by the chord (about 2 % of a Gaussian's integral at nodes half a standard deviation apart)."""
    y = np.ascontiguousarray(np.moveaxis(y, axis, -1))  # the segments' pairs next to each other in memory
    y0, y1 = y[..., :-1], y[..., 1:]
    h = np.diff(x)
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        top = np.maximum(y0, y1)
        d = np.subtract(y1, y0)
        np.abs(d, out=d)
        np.negative(d, out=d)  # ≤ 0: the segment seen from its higher end
        # log of h · (e^{y1} − e^{y0}) / (y1 − y0) = top + log h + log(expm1(d) / d); about d / 2 as d → 0
        steep = d < -1e-8
        dd = np.where(steep, d, -1.0)
        ratio = np.expm1(dd)
        ratio /= dd
        np.log(ratio, out=ratio)
        d /= 2
        shape = np.where(steep, ratio, d)
        seg = top + np.log(h)
        seg += shape
    seg[~np.isfinite(top)] = -np.inf
    # log Σ exp along the segments; scipy's logsumexp checks and broadcasts far more than this needs
    peak = seg.max(axis=-1, keepdims=True)
    peak = np.where(np.isfinite(peak), peak, 0.0)
    with np.errstate(divide="ignore"):
        return np.log(np.exp(seg - peak).sum(axis=-1)) + peak[..., 0]


def _hybrid_range(pb: _Problem, ax: dict, ll: np.ndarray, ci: float, offset,
                  scale: float = 1.0) -> tuple[float, float]:
    """Likelihood-ratio interval of q = m + offset(nuisance) with the guess rate integrated under its prior.

    For each q the log likelihood is read at m = q − offset in every nuisance column, the guess axis is summed
    out with its prior and integration weights, and the result is maximised over width, lapse and η; the
    interval keeps the q within χ²₁(ci)/2 of that function's maximum. The profile interval ranges over every
    guess rate the data allow, however implausible, which stretches it where the levels do not reach the lower
    asymptote; integrating over the guess rate weighs them by the prior instead. With the guess rate fixed (nAFC,
    or ``guess=`` given) it is the profile interval, its cut scaled by ``scale``: the Bartlett factor ``fit``
    estimates there, where no integration widens the interval (``analysis.stats.bartlett``).
    """
    m = ax["m"]
    off = np.broadcast_to(offset, ll.shape[1:])
    # the shifts on their own shape (no η axis), which ``_shifted`` broadcasts: the same values, less work
    small = np.asarray(offset, dtype=float)
    small = small if small.ndim == ll.ndim - 1 else off
    g = ax["guess"]
    prior = _log(pb.priors["guess"](g)).reshape(1, 1, 1, -1, 1)
    if len(g) > 1:
        # guess rates at or above the asked proportion put ψ above it everywhere: no level reaches it there, so
        # the integral runs over the guess nodes where one can; with fewer than two such nodes there is nothing
        # to integrate and the profile interval stands in
        usable = np.isfinite(off).any(axis=(0, 1, 3))
        if usable.sum() < 2:
            return _profile_range(m, ll, _profile_cut(ll, ci, scale), offset)
        ll, off, g, prior = ll[:, :, :, usable], off[:, :, usable], g[usable], prior[:, :, :, usable]
        small = small[:, :, usable] if small.shape[2] > 1 else small
    finite = off[np.isfinite(off)]
    if finite.size == 0:
        return float("nan"), float("nan")

    def integrate(y):
        return _log_integral(y + prior, g, axis=3) if len(g) > 1 else y

    shifted = np.ptp(finite) >= 1e-12
    if not shifted:  # one shift for every column (the fitted threshold): the grid's own m axis
        q, f = m + float(finite[0]), ll
    else:
        q = np.linspace(m[0] + finite.min(), m[-1] + finite.max(), 3 * len(m))
        f = _shifted(m, ll, small, q)
    f = integrate(f).reshape(len(q), -1)  # one column per (width, lapse, η): maximised over by ``_profile_range``
    cut = _profile_cut(f, ci, scale)
    lo, hi = _profile_range(q, f, cut, 0.0)
    return float(lo), float(hi)


def _core_level(pb: _Problem, p: float, m, w, lapse, guess):
    """Level z where ψ reaches p; -inf if ψ starts above p, +inf if it never reaches it."""
    scale = 1.0 - lapse - guess
    with np.errstate(invalid="ignore", divide="ignore"):
        s = (p - guess) / scale
        z = pb.sigmoid.inverse(np.clip(s, 1e-300, 1 - 1e-16), m, w)
    z = np.where(s <= 0, -np.inf, z)
    return np.where(s >= 1, np.inf, z)


def _profile_range(m: np.ndarray, ll: np.ndarray, cut: float, offset) -> tuple[float, float]:
    """Profile-likelihood interval of q = m + offset(nuisance) from the grid log likelihood ``ll`` (M, ...).

    For every combination of the nuisance nodes (width, lapse, guess, η) the likelihood along the m axis is
    cut at ``cut``: its first and last nodes above the cut, each moved to the crossing by linear
    interpolation with its outside neighbour, are that combination's ends. The interval is the range of q
    over these segments, i.e. {q : max over the nuisance of ll >= cut}, the profile-likelihood interval. Every
    threshold here is a shift of m (the sigmoids are location-scale families), so ``offset`` holds that shift
    per nuisance combination (±inf where ψ never reaches the asked proportion).

    A segment that is still above the cut at an end of the m axis is open on that side: the data do not bound
    the threshold within the range the grid spans (the levels ± half their spread), so that end is ±inf rather
    than the grid's edge, which would read as a finite bound the data never set.
    """
    n_m = len(m)
    flat = ll.reshape(n_m, -1)
    off = np.broadcast_to(offset, ll.shape[1:]).reshape(-1)
    inside = flat >= cut
    cols = np.nonzero(inside.any(axis=0))[0]
    first = np.argmax(inside[:, cols], axis=0)
    last = n_m - 1 - np.argmax(inside[::-1, cols], axis=0)
    lo, hi = m[first].astype(float), m[last].astype(float)
    if n_m > 1:
        lo[first == 0] = -np.inf
        hi[last == n_m - 1] = np.inf
        with np.errstate(invalid="ignore", divide="ignore"):
            sel = first > 0
            i, c = first[sel], cols[sel]
            y0, y1 = flat[i - 1, c], flat[i, c]
            lo[sel] = m[i - 1] + (cut - y0) / (y1 - y0) * (m[i] - m[i - 1])
            sel = last < n_m - 1
            i, c = last[sel], cols[sel]
            y0, y1 = flat[i, c], flat[i + 1, c]
            hi[sel] = m[i] + (y0 - cut) / (y0 - y1) * (m[i + 1] - m[i])
    with np.errstate(invalid="ignore"):
        return float(np.nanmin(lo + off[cols])), float(np.nanmax(hi + off[cols]))


def _to_levels(axis: Axis, point, lo, hi) -> tuple[float, tuple[float, float]]:
    """A point and interval on the fitting axis in the caller's units; an open (infinite) end stays infinite on
    its side in levels too (on a log axis it would otherwise become 0, which reads as a bound)."""
    a, b, c = (float(v) for v in axis.inverse(np.array([point, lo, hi])))
    low, high = min(b, c), max(b, c)
    open_low, open_high = (hi == np.inf, lo == -np.inf) if axis.decreasing else (lo == -np.inf, hi == np.inf)
    return a, (-math.inf if open_low else low, math.inf if open_high else high)


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
    _loglik: np.ndarray | None = field(default=None, repr=False)
    _levels_at: dict = field(default_factory=dict, repr=False, compare=False)
    bartlett: float = 1.0  # the hybrid interval's likelihood-ratio cut over χ²₁'s (``_bartlett``)
    _intervals: bool = field(default=True, repr=False)  # False: a points-only fit (``fit(..., intervals=False)``)

    def threshold_at(self, p: float, *, of: str = "psi") -> tuple[float, tuple[float, float]]:
        """Level where ψ (``of="psi"``) or the core sigmoid (``of="core"``) reaches ``p``, with its own CI.

        The interval marginalises that level over the posterior grid (``interval="posterior"``) or is its
        profile-likelihood interval (``interval="profile"``, see ``fit``), so it is direct, not a bound.
        Remembered per (p, of): the pipeline, the jackknife and the report ask for the same point.
        """
        if not 0 < p < 1:
            raise ValueError("p must lie strictly between 0 and 1")
        key = (float(p), of)
        if key not in self._levels_at:
            self._levels_at[key] = self._threshold_at(p, of)
        return self._levels_at[key]

    def _threshold_at(self, p: float, of: str) -> tuple[float, tuple[float, float]]:
        pb, ax, mp = self._pb, self._axes, self._map
        w = ax["w"][:, None, None, None]  # the nuisance axes (W, Λ, Γ, H) of the log likelihood
        lam, gam = ax["lapse"][None, :, None, None], ax["guess"][None, None, :, None]
        if of == "core":
            offset = pb.sigmoid.inverse(p, 0.0, w)
            point = pb.sigmoid.inverse(p, mp["m"], mp["w"])
        elif of == "psi":
            offset = _core_level(pb, p, 0.0, w, lam, gam)
            point = _core_level(pb, p, mp["m"], mp["w"], mp["lapse"], mp["guess"])
        else:
            raise ValueError("of must be 'psi' or 'core'")
        if not self._intervals:
            return self._to_levels(float(point), np.nan, np.nan)
        if self.options.interval == "profile":
            lo, hi = _profile_range(ax["m"], self._loglik, _profile_cut(self._loglik, self.options.ci), offset)
        elif self.options.interval == "hybrid":
            lo, hi = _hybrid_range(pb, ax, self._loglik, self.options.ci, offset, self.bartlett)
        else:
            mass = self._mass.sum(axis=4)  # over η
            tail = (1 - self.options.ci) / 2
            shift = np.broadcast_to(offset[..., 0], mass.shape[1:])
            if np.all(np.isfinite(shift)) and np.ptp(shift) < 1e-12:
                # one shift for every column (the fitted proportion of the core): the m marginal's cell
                # quantiles, as ``fit`` reports them, rather than the node values
                lo, hi = _cell_quantiles(ax["m"] + float(shift.flat[0]), mass.sum(axis=(1, 2, 3)),
                                         (tail, 1 - tail))
            else:
                z = np.broadcast_to(ax["m"][:, None, None, None] + offset[None, ..., 0], mass.shape)
                lo, hi = _weighted_quantiles(z, mass, (tail, 1 - tail))
        # a point past every level (ψ at the fitted rates starts above p, or never reaches it) lies in its interval:
        # that side is open, whatever the other rates would bound
        lo = -np.inf if point == -np.inf else lo
        hi = np.inf if point == np.inf else hi
        return self._to_levels(float(point), lo, hi)

    def _to_levels(self, point, lo, hi):
        return _to_levels(self._axis, point, lo, hi)

    @property
    def threshold_ci_open(self) -> list[str]:
        """The sides ("low", "high") on which the threshold's interval is open: the data do not bound it there."""
        lo, hi = self.threshold_ci_95
        return [side for side, end in (("low", lo), ("high", hi)) if math.isinf(end)]

    @property
    def tested_range(self) -> tuple[float, float]:
        """The lowest and highest level with trials, in the caller's units."""
        levels = self._axis.inverse(self._pb.z)
        return float(np.min(levels)), float(np.max(levels))

    @property
    def beyond_levels(self) -> str | None:
        """"below" or "above" when the threshold lies outside the tested levels (its value is then the prior's,
        not the data's), else None."""
        low, high = self.tested_range
        if not math.isfinite(self.threshold) or low <= self.threshold <= high:
            return None
        return "below" if self.threshold < low else "above"

    def warnings(self) -> list[str]:
        """What a researcher should know before reading the numbers: open intervals, a threshold outside the
        tested levels (then it is the prior's, not the data's), nAFC answers below chance. One list for every
        caller (``fit_curve``, the pipeline)."""
        pb, out = self._pb, []
        low, high = self.tested_range
        if self.beyond_levels:
            out.append(f"the threshold ({self.threshold:.4g}) lies {self.beyond_levels} the levels tested "
                       f"({low:g}–{high:g}): the answers barely change across them, so its value and interval rest "
                       "on the prior, not on the data; test levels that reach it")
        for side in self.threshold_ci_open:
            out.append(f"the threshold's {100 * self.options.ci:g} % interval is open on the {side} side: the "
                       f"answers do not bound it within the tested levels ({low:g}–{high:g}) and half their "
                       "spread beyond")
        guess = self.options.fixed_guess
        if self.options.experiment != "yes/no" and guess is not None:
            k, n = float(pb.k.sum()), float(pb.n.sum())
            p = stats.binomtest(int(round(k)), int(round(n)), guess, alternative="less").pvalue if n else 1.0
            if p < 0.05:
                out.append(f"the answers are below chance: {100 * k / n:.1f} % correct where guessing gives "
                           f"{100 * guess:g} % (binomial p = {p:.2g}); check that responses are coded 1 = correct")
        return out

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
            "threshold_ci_95": list(self.threshold_ci_95),  # ±inf on an open side (``threshold_ci_open``)
            "threshold_ci_open": self.threshold_ci_open,
            "threshold_pc": o.pc,
            "interval": o.interval,
            "width": self.width,
            "width_ci_95": list(self.width_ci),
            "slope": self.slope,
            "guess": self.guess,
            "lapse": self.lapse,
            "eta": self.eta,
            "deviance": self.deviance,
            "deviance_p": self.deviance_p,
            "bartlett_factor": self.bartlett,
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
    # ψ depends on the row's level only, and rows with the same (level, count, trials) give the same term: the
    # likelihood is summed over the distinct ones with their multiplicities (many rows per level in a pooled fit,
    # a handful of distinct counts each), which is what the optimiser's many evaluations pay for
    rows, mult = np.unique(np.column_stack([pb.row_level, pb.k, pb.n]), axis=0, return_counts=True)
    level, k, n = rows[:, 0].astype(int), rows[:, 1], rows[:, 2]
    mult = mult.astype(float)
    trials, n_mult = np.unique(pb.n, return_counts=True)
    n_mult = n_mult.astype(float)
    ku, fu = pb.ku, pb.nu - pb.ku
    order = ("m", "w", "lapse", "guess", "eta")
    base = [fixed.get(name) for name in order]
    slots = [order.index(name) for name in names]
    priors = [pb.priors[name] for name in names]

    # the sigmoid's arithmetic spelled out (the same operations as ``Sigmoid.__call__``, so the same values) and
    # np.minimum/np.maximum for np.clip: the optimiser calls this a hundred times per fit, where numpy's wrappers
    # cost more than the arithmetic
    cdf, ppf, _pdf = sigmoids.standard(pb.sigmoid.name)
    span = ppf(1 - pb.sigmoid.alpha) - ppf(pb.sigmoid.alpha)
    at_pc = ppf(pb.sigmoid.pc)
    zu = pb.zu
    gl = special.gammaln
    norm: dict[float, float] = {}  # the beta-binomial's normalising sum per η (η is never among the free names)

    def f(theta):
        v = list(base)
        for slot, x in zip(slots, theta):
            v[slot] = x
        m, w, lapse, guess, eta = v
        scale = float(w) / span
        loc = float(m) - at_pc * scale
        psi = guess + (1 - guess - lapse) * cdf((zu - loc) / scale)
        psi = np.minimum(np.maximum(psi, 1e-12), 1 - 1e-12)
        if eta > 1e-9:
            nu = 1 / eta ** 2 - 1
            at = psi[level]
            a = at * nu
            b = (1 - at) * nu
            ll = float(mult @ (gl(k + a) - gl(a) + gl(n - k + b) - gl(b)))
            if eta not in norm:
                norm[eta] = float(n_mult @ (gl(nu) - gl(trials + nu)))
            ll += norm[eta]
        else:
            ll = float(ku @ np.log(psi) + fu @ np.log1p(-psi))
        lp = ll
        for prior, x in zip(priors, theta):
            lp += float(_log(prior(x)))
        return -lp if math.isfinite(lp) else 1e300

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
    # ψ depends on the level only: a resample's binomial log likelihood is its counts summed per level times
    # log ψ at the distinct levels, (levels × grid) rather than (rows × grid)
    psi = _psi_grid(pb, sub).reshape(-1, len(pb.zu))
    lpsi, l1m = np.log(psi).T, np.log1p(-psi).T  # (levels, G)
    rng = np.random.default_rng(seed)
    ks = rng.binomial(pb.n.astype(int), np.clip(psi_hat, 0, 1), size=(samples, len(pb.n))).astype(float)
    ks = np.vstack([pb.k[None, :], ks])
    to_level = np.zeros((len(pb.z), len(pb.zu)))
    to_level[np.arange(len(pb.z)), pb.row_level] = 1.0
    ku = ks @ to_level  # (resamples, levels)
    ll = (ku @ lpsi + (pb.nu - ku) @ l1m).max(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        p = np.where(pb.n > 0, ks / pb.n, 0.5)
        sat = np.sum(special.xlogy(ks, p) + special.xlogy(pb.n - ks, 1 - p), axis=1)
    devs = 2 * (sat - ll)
    return float((np.sum(devs[1:] >= devs[0] - 1e-9) + 1) / (samples + 1))


# --- the fit ----------------------------------------------------------------------------------------------


def _bartlett(pb: _Problem, ax: dict, mp: dict, opts: FitOptions) -> float:
    """The hybrid interval's Bartlett factor where the guess rate is fixed, else 1.

    With the guess rate free the interval integrates it out, which widens it by about the likelihood-ratio
    statistic's small-sample excess (the yes/no designs cover 95 % at η = 0 without a correction); with it fixed
    the interval is the profile one and falls short (94 % on 2AFC), so its cut is scaled by the statistic's
    bootstrap mean (``analysis.stats.bartlett``). Binomial resamples at the MAP fit, on the grid's η = 0 slice.
    """
    if opts.interval != "hybrid" or len(ax["guess"]) > 1 or opts.bartlett_samples == 0:
        return 1.0
    psi = _psi_grid(pb, ax)[:, :, :, 0, :]  # (M, W, Λ, L): the guess axis has one node
    p0 = mp["guess"] + (1 - mp["guess"] - mp["lapse"]) * pb.sigmoid(pb.zu, mp["m"], mp["w"])
    rng = np.random.default_rng([opts.seed, 1])  # apart from the deviance's resamples (seeded by ``seed``)
    return bartlett_factor(psi.reshape(len(ax["m"]), -1, len(pb.zu)), pb.nu, p0, ax["m"], mp["m"],
                           opts.bartlett_samples, rng)


def fit(data: Data, options: FitOptions | None = None, *, intervals: bool = True) -> FitResult:
    """Fit ψ to aggregated data and summarise the posterior (threshold, width, CIs, deviance).

    ``intervals=False`` gives the points only (the same MAP fit, on the same grids): every interval is NaN, and
    so is ``threshold_at``'s. For callers that read points alone, the jackknife's refits and the individual fits
    behind the mean of individual thresholds, which would otherwise pay for intervals they never read."""
    opts = options or FitOptions()
    axis = Axis(log=opts.uses_log_axis, decreasing=opts.decreasing)
    if data.n_trials == 0:
        raise ValueError("no trials to fit")
    pb = _problem(data, opts, axis)
    coarse = _axes(pb.bounds, 0)
    mass, _, ll = _posterior(pb, coarse)
    if opts.interval != "posterior":
        # the fine box must also hold the likelihood-ratio region (with room for the coarse steps), which a weak
        # prior tail could otherwise cut
        mass = np.where(ll >= ll.max() - _LR_ROOM, 1.0, mass)
    fine = _axes(_tighten(coarse, mass), 1)
    mass, lp, ll = _posterior(pb, fine)
    mp = _maximise(pb, fine, lp)
    bartlett = _bartlett(pb, fine, mp, opts)

    tail = (1 - opts.ci) / 2
    if not intervals:
        m_lo = m_hi = w_lo = w_hi = np.nan
    elif opts.interval == "profile":
        m_lo, m_hi = _profile_range(fine["m"], ll, _profile_cut(ll, opts.ci), 0.0)
    elif opts.interval == "hybrid":
        m_lo, m_hi = _hybrid_range(pb, fine, ll, opts.ci, 0.0, bartlett)
    else:
        m_lo, m_hi = _cell_quantiles(fine["m"], mass.sum(axis=(1, 2, 3, 4)), (tail, 1 - tail))
    if intervals:
        w_lo, w_hi = _cell_quantiles(fine["w"], mass.sum(axis=(0, 2, 3, 4)), (tail, 1 - tail))
    point, (thr_lo, thr_hi) = _to_levels(axis, mp["m"], m_lo, m_hi)
    slope = (1 - mp["guess"] - mp["lapse"]) * float(pb.sigmoid.derivative(mp["m"], mp["m"], mp["w"]))
    psi_hat = mp["guess"] + (1 - mp["guess"] - mp["lapse"]) * pb.sigmoid(pb.z, mp["m"], mp["w"])
    dev = _deviance(pb.k, pb.n, psi_hat)
    dev_p = _deviance_p(pb, fine, psi_hat, opts.deviance_samples, opts.seed) if opts.deviance_samples > 0 else None
    result = FitResult(
        threshold=point,
        threshold_ci_95=(thr_lo, thr_hi),
        width=float(mp["w"]),
        width_ci=(float(w_lo), float(w_hi)),
        slope=slope,
        guess=float(mp["guess"]),
        lapse=float(mp["lapse"]),
        eta=float(mp["eta"]),
        deviance=dev,
        deviance_p=dev_p,
        n_trials=data.n_trials,
        n_levels=data.n_levels,
        options=opts,
        _pb=pb,
        _axes=fine,
        _mass=mass,
        _axis=axis,
        map_params=mp,
        _loglik=ll,
        bartlett=bartlett,
        _intervals=intervals,
    )
    return result


def simulate(rng: np.random.Generator, levels, n_per_level: int, *, m: float, w: float, sigmoid: str = "logistic",
             guess: float = 0.0, lapse: float = 0.0, eta: float = 0.0, log_axis: bool = False,
             decreasing: bool = False, blocks_per_level: int = 1) -> Data:
    """Simulated observer: ``n_per_level`` trials per level, beta-binomial when ``eta`` > 0.

    ``blocks_per_level`` > 1 splits each level's trials into that many rows (sizes as equal as possible), as a
    session's blocks or several participants would; η is drawn per row, so overdispersion is non-stationarity
    from block to block. The result keeps the rows (``blocks``); with one block per level it is one row per
    level. ``m`` and ``w`` are on the fitting axis (log levels for a log axis), as the fit reports its width.
    """
    if blocks_per_level < 1 or blocks_per_level > n_per_level:
        raise ValueError("blocks_per_level must lie between 1 and n_per_level")
    axis = Axis(log=log_axis or sigmoid == "weibull", decreasing=decreasing)
    levels = np.asarray(levels, dtype=float)
    z = axis.forward(levels)
    p = guess + (1 - guess - lapse) * Sigmoid(sigmoid)(z, m, w)
    sizes = np.full(blocks_per_level, n_per_level // blocks_per_level)
    sizes[: n_per_level % blocks_per_level] += 1
    p = np.repeat(p, blocks_per_level)
    if eta > 0:
        nu = 1 / eta**2 - 1
        p = rng.beta(np.maximum(p * nu, 1e-9), np.maximum((1 - p) * nu, 1e-9))
    n = np.tile(sizes, len(z))
    return blocks(np.repeat(levels, blocks_per_level), rng.binomial(n, p), n)


__all__ = ["Axis", "Data", "FitOptions", "FitResult", "aggregate", "aggregate_trials", "blocks", "fit", "simulate"]
