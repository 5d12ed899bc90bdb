"""Psychometric functions and stimulus axes shared by the observer model and QUEST+.

One parametrisation everywhere, so the simulated observer and the procedure's model agree exactly:

    u = level            (axis "linear")      u = log10(level)      (axis "log")
    z = slope · sign · (u − threshold_u)       sign = +1 ("increasing"), −1 ("decreasing")
    p_yes = guess + (1 − guess − lapse) · F(z)

with F one of ``logistic`` (1 / (1 + e^−z)), ``norm`` (Φ(z), so ``sd = 1/slope``) or ``weibull``
(1 − exp(−10^z), the log-axis Weibull of Watson's QUEST+). ``slope`` is per axis unit (per log10 unit on a log
axis). For ``logistic`` and ``norm`` F(0) = 1/2: the threshold is the level where F is one half. A
"decreasing" direction means "yes" (acceptable) is more likely at LOWER levels, as for TTFT or stall length.
"""

from __future__ import annotations

import numpy as np
from scipy import special

FUNCTIONS: tuple[str, ...] = ("logistic", "norm", "weibull")  # named as analysis/stats/sigmoids.py names them
# ``normal``: the study file's and bot model file's spelling before the names were unified; still accepted
ALIASES: dict[str, str] = {"normal": "norm"}


def function_name(function: str) -> str:
    """The canonical name of a sigmoid (``normal`` is ``norm``)."""
    return ALIASES.get(function, function)
AXES: tuple[str, ...] = ("linear", "log")
DIRECTIONS: tuple[str, ...] = ("increasing", "decreasing")


def to_axis(level, axis: str):
    """Level (in the dimension's unit) to axis units: itself, or its log10."""
    if axis == "log":
        return np.log10(level)
    return level


def from_axis(u, axis: str):
    """Axis units back to a level."""
    if axis == "log":
        return 10.0**u
    return u


def sign_of(direction: str) -> float:
    """+1 when "yes" grows with the level, −1 when it shrinks."""
    return 1.0 if direction == "increasing" else -1.0


def cdf(function: str, z):
    """F(z): the sigmoid core of the psychometric function, in [0, 1]."""
    if function == "logistic":
        return special.expit(z)
    if function_name(function) == "norm":
        return special.ndtr(z)
    if function == "weibull":
        return -np.expm1(-np.power(10.0, z))
    raise ValueError(f"function: must be one of {', '.join(FUNCTIONS)}; got {function!r}")


def cdf_inverse(function: str, f):
    """z such that F(z) = f (0 < f < 1)."""
    if function == "logistic":
        return special.logit(f)
    if function_name(function) == "norm":
        return special.ndtri(f)
    if function == "weibull":
        return np.log10(-np.log1p(-np.asarray(f, dtype=float)))
    raise ValueError(f"function: must be one of {', '.join(FUNCTIONS)}; got {function!r}")


def p_yes(u, threshold_u, slope, guess, lapse, function: str, sign: float):
    """Probability of "yes" at axis value ``u`` (arrays broadcast)."""
    return guess + (1.0 - guess - lapse) * cdf(function, slope * sign * (u - threshold_u))
