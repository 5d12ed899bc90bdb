"""Sigmoid families in psignifit's parameterisation: threshold m and width w, not location and scale.

A core sigmoid S(x; m, w) rises from 0 to 1. ``m`` is the level where S reaches ``pc`` (default 0.5) and
``w`` is the distance between the levels where S reaches ``alpha`` and ``1 - alpha`` (default the 5 %-95 %
rise). Parameterising by (m, w) makes thresholds and widths comparable across families, so a prior or a
grid written for one family fits all of them (Schütt et al. 2016, Vision Research 122).

Weibull is the Gumbel (minimum-extreme, ``1 - exp(-exp(u))``) sigmoid on a log axis: the caller transforms
the levels (``psychometric.Axis``) and uses the Gumbel core here.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import special

NAMES = ("logistic", "norm", "gumbel", "weibull")
LOG_AXIS_FAMILIES = frozenset({"weibull"})


def _norm_cdf(u):
    return special.ndtr(u)


def _norm_ppf(p):
    return special.ndtri(p)


def _norm_pdf(u):
    return np.exp(-0.5 * np.square(u)) / np.sqrt(2 * np.pi)


def _logistic_cdf(u):
    return special.expit(u)


def _logistic_ppf(p):
    return special.logit(p)


def _logistic_pdf(u):
    e = special.expit(u)
    return e * (1 - e)


def _gumbel_cdf(u):
    return -np.expm1(-np.exp(u))


def _gumbel_ppf(p):
    return np.log(-np.log1p(-np.asarray(p, dtype=float)))


def _gumbel_pdf(u):
    return np.exp(u - np.exp(u))


_STANDARD = {
    "norm": (_norm_cdf, _norm_ppf, _norm_pdf),
    "logistic": (_logistic_cdf, _logistic_ppf, _logistic_pdf),
    "gumbel": (_gumbel_cdf, _gumbel_ppf, _gumbel_pdf),
    "weibull": (_gumbel_cdf, _gumbel_ppf, _gumbel_pdf),
}


def standard(name: str) -> tuple:
    """The (cdf, ppf, pdf) of a family's standard form, for callers that inline ``Sigmoid``'s arithmetic in a hot
    loop (``psychometric``'s optimiser objective)."""
    return _STANDARD[name]


@dataclass(frozen=True)
class Sigmoid:
    """A core sigmoid family; ``pc`` is the rise proportion that ``m`` marks, ``alpha`` sets the width."""

    name: str = "logistic"
    pc: float = 0.5
    alpha: float = 0.05

    def __post_init__(self):
        if self.name not in _STANDARD:
            raise ValueError(f"unknown sigmoid {self.name!r}; choose one of {', '.join(NAMES)}")
        if not 0 < self.pc < 1:
            raise ValueError("pc must lie strictly between 0 and 1")
        if not 0 < self.alpha < 0.5:
            raise ValueError("alpha must lie strictly between 0 and 0.5")

    @property
    def log_axis(self) -> bool:
        """Whether the family is defined on log levels (Weibull)."""
        return self.name in LOG_AXIS_FAMILIES

    def _scale_loc(self, m, w):
        _cdf, ppf, _pdf = _STANDARD[self.name]
        span = ppf(1 - self.alpha) - ppf(self.alpha)
        scale = np.asarray(w, dtype=float) / span
        loc = np.asarray(m, dtype=float) - ppf(self.pc) * scale
        return scale, loc

    def __call__(self, x, m, w):
        """S(x; m, w), broadcasting over all arguments."""
        cdf, _ppf, _pdf = _STANDARD[self.name]
        scale, loc = self._scale_loc(m, w)
        return cdf((np.asarray(x, dtype=float) - loc) / scale)

    def inverse(self, p, m, w):
        """The level where S reaches ``p`` (nan outside (0, 1))."""
        _cdf, ppf, _pdf = _STANDARD[self.name]
        scale, loc = self._scale_loc(m, w)
        p = np.asarray(p, dtype=float)
        with np.errstate(invalid="ignore", divide="ignore"):
            out = loc + scale * ppf(np.where((p > 0) & (p < 1), p, np.nan))
        return out

    def derivative(self, x, m, w):
        """dS/dx at ``x``."""
        _cdf, _ppf, pdf = _STANDARD[self.name]
        scale, loc = self._scale_loc(m, w)
        return pdf((np.asarray(x, dtype=float) - loc) / scale) / scale

    def log_width_derivative(self, x, m, w):
        """dS/d(log w) at ``x``: S = cdf(u) with u = (x − m)/scale + ppf(pc) and scale ∝ w, so
        du/d(log w) = −(u − ppf(pc)). For likelihoods that take exact gradients in a log width."""
        _cdf, ppf, pdf = _STANDARD[self.name]
        scale, loc = self._scale_loc(m, w)
        u = (np.asarray(x, dtype=float) - loc) / scale
        return -pdf(u) * (u - ppf(self.pc))


def psi(sigmoid: Sigmoid, x, m, w, guess=0.0, lapse=0.0):
    """The psychometric function ψ(x) = γ + (1 − γ − λ)·S(x; m, w)."""
    return guess + (1.0 - guess - lapse) * sigmoid(x, m, w)
