"""Participant-level uncertainty of a pooled psychometric fit: the delete-a-group jackknife over participants.

A pooled fit gives every (participant, level) row its own binomial (or beta-binomial, η) term, as if rows were
independent given the curve. They are not: a participant whose threshold is low answers "yes" more often at
*every* level, so one person's rows move together, and when people differ the model's interval is too short for
the population the participants were drawn from (docs/analysis.md, "Pooled fits over participants": 77 % and
87 % coverage of a nominal 95 % in simulation). Leaving out groups of participants and refitting measures the
estimate's spread across people whatever the within-person model; the reported interval is the wider of the
model's and the jackknife's at each end, so it does not shrink where the model is right.

The refits hold the guess and lapse rates at the full fit's values. The jackknife is there for the dependence
between one person's rows; the model's interval already carries the uncertainty of those rates; and a refit free
to move them can jump between two modes of the likelihood (a lapse rate at 0 or at its bound), which turns the
jackknife's variance, made for smooth estimates, into nonsense (the demo's slowest condition went from the model's
[27.5, 46.4] tokens/s to [8.7, 73.8] when three of twenty refits jumped).
Pure: numpy, scipy and ``analysis.stats.psychometric``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import stats

from analysis.stats.psychometric import FitOptions, FitResult, blocks, fit

MIN_GROUPS = 5  # below this the jackknife's variance has too few degrees of freedom to be worth reporting
MAX_GROUPS = 20  # participants are pooled into at most this many groups: 20 refits per fit


@dataclass(frozen=True)
class Jackknife:
    """Jackknife-t intervals (levels, the caller's units) of the threshold and of the ``q`` point of ψ."""

    groups: int
    threshold_ci: tuple[float, float]
    threshold_q_ci: tuple[float, float] | None


def group_of(participants, max_groups: int = MAX_GROUPS) -> np.ndarray:
    """Each row's jackknife group: distinct participants in sorted order, dealt round-robin into the groups.

    Deterministic, so a rerun on the same data reports the same interval."""
    labels = np.asarray([str(p) for p in participants])
    distinct = np.unique(labels)
    index = {p: i % min(max_groups, len(distinct)) for i, p in enumerate(distinct)}
    return np.array([index[p] for p in labels], dtype=int)


def jackknife(levels, n_positive, n_total, participants, options: FitOptions, full: FitResult, *,
              q: float | None = None, max_groups: int = MAX_GROUPS) -> Jackknife | None:
    """Refit leaving out one group of participants at a time; None with fewer than ``MIN_GROUPS`` participants.

    The spread is taken on the fitting axis (log levels on a log axis, negated for a falling curve), where the
    estimate is about symmetric, with Student-t quantiles on groups − 1 degrees of freedom. A refit that fails
    (too few levels left) raises ValueError: one group's absence should never decide the interval silently."""
    levels, k, n = (np.asarray(a) for a in (levels, n_positive, n_total))
    group = group_of(participants, max_groups)
    d = int(group.max()) + 1 if len(group) else 0
    if d < MIN_GROUPS:
        return None
    # guess and lapse held at the full fit's values: see the module docstring
    held = {"lapse": full.lapse, **({"guess": full.guess} if options.experiment == "yes/no" else {})}
    # only the refits' points are read, so no deviance p and no Bartlett factor (both resample)
    opts = FitOptions(**{**options.__dict__, "deviance_samples": 0, "bartlett_samples": 0, **held})
    axis = full._axis
    est = np.empty((d, 2))
    for g in range(d):
        keep = group != g
        r = fit(blocks(levels[keep], k[keep], n[keep]), opts, intervals=False)  # points only
        est[g, 0] = r.threshold
        est[g, 1] = r.threshold_at(q)[0] if q is not None else np.nan
    points = [full.threshold, full.threshold_at(q)[0] if q is not None else np.nan]
    t = stats.t.ppf(1 - (1 - options.ci) / 2, d - 1)

    def interval(col: int) -> tuple[float, float]:
        z = axis.forward(est[:, col])
        se = np.sqrt((d - 1) / d * np.sum((z - z.mean()) ** 2))
        centre = float(axis.forward(points[col]))
        lo, hi = (float(v) for v in axis.inverse(np.array([centre - t * se, centre + t * se])))
        return min(lo, hi), max(lo, hi)

    return Jackknife(groups=d, threshold_ci=interval(0), threshold_q_ci=interval(1) if q is not None else None)


def widest(model: tuple[float, float], other: tuple[float, float] | None) -> tuple[float, float]:
    """The interval reaching as far as either one at each end (the model's when there is no other)."""
    if other is None:
        return float(model[0]), float(model[1])
    return float(min(model[0], other[0])), float(max(model[1], other[1]))


def spread_keys(levels, n_positive, n_total, participants, options: FitOptions, full: FitResult, *,
                q: float | None = None, max_groups: int = MAX_GROUPS) -> dict:
    """The pooled fit's intervals widened to the participant jackknife where it reaches further, as report keys.

    One decision for every caller (pipeline, ``fit_curve``, ``fit_by_condition``): the reported
    ``threshold_ci_95`` (and ``threshold_q_ci_95`` with ``q``), the model's under ``*_model``, the jackknife's
    under ``*_jackknife`` when it was used, and ``cluster``: the method and groups, or why it was not used (no
    participants given, ``max_groups`` ≤ 0, fewer than ``MIN_GROUPS`` participants, or a refit without one
    group failed). A failed refit keeps the model's interval and says so rather than losing the whole fit."""
    model = {"threshold_ci_95": list(full.threshold_ci_95)}
    if q is not None:
        model["threshold_q_ci_95"] = list(full.threshold_at(q)[1])
    out = {**model, **{f"{k}_model": v for k, v in model.items()}}
    if participants is None:
        return {**out, "cluster": {"method": None, "reason": "no participant column"}}
    if max_groups <= 0:
        return {**out, "cluster": {"method": None, "reason": "off"}}
    try:
        jk = jackknife(levels, n_positive, n_total, participants, options, full, q=q, max_groups=max_groups)
    except ValueError as exc:
        return {**out, "cluster": {"method": None, "reason": f"a refit without one group failed: {exc}"}}
    if jk is None:
        return {**out, "cluster": {"method": None, "reason": f"fewer than {MIN_GROUPS} participants"}}
    out["threshold_ci_95"] = list(widest(full.threshold_ci_95, jk.threshold_ci))
    out["threshold_ci_95_jackknife"] = list(jk.threshold_ci)
    if q is not None:
        out["threshold_q_ci_95"] = list(widest(model["threshold_q_ci_95"], jk.threshold_q_ci))
        out["threshold_q_ci_95_jackknife"] = list(jk.threshold_q_ci)
    return {**out, "cluster": {"method": "participant jackknife", "groups": jk.groups}}
