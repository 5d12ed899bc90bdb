"""The study file's exclusion rules applied to the tidy trials table: nothing is deleted, rows are marked.

Rules (``exclusions:`` in the study file, docs/study-file.md):

- ``failed_attention``: participants who failed any attention check.
- ``fidelity_violated`` ``{max_fraction, bound_ms}``: a trial violates fidelity when the p95 lateness of its
  paint log beyond its render strategy's design exceeds ``bound_ms`` (default 33.4 ms), or the participant saw
  a stall (``playback.core.fidelity``). With ``max_fraction``, participants whose share of violating
  (non-practice, logged) trials exceeds it are excluded; without it, each violating trial is excluded.
- ``incomplete``: sessions that did not complete. ``withdrawn``: sessions withdrawn by the participant.
- ``too_fast`` ``{min_median_rt_ms}``: participants whose median response time (non-practice trials) is lower.

A session already marked excluded in the database (a withdrawal kept as excluded) is always excluded, with the
reason ``session_excluded``. The report says who and what was excluded and why, with counts per rule. No Django.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from analysis.reporting.wording import counted
from playback.core import fidelity

RULES = ("failed_attention", "fidelity_violated", "incomplete", "too_fast", "withdrawn")
SESSION_EXCLUDED = "session_excluded"
ATTENTION_FLAG = "failed attention check"


@dataclass
class RuleResult:
    rule: str
    params: dict[str, Any]
    participants: list[int]
    trials: int

    def label(self) -> str:
        args = ", ".join(f"{k}={v}" for k, v in self.params.items())
        return f"{self.rule} ({args})" if args else self.rule


@dataclass
class ExclusionReport:
    """What the rules excluded: per rule, per participant, and in total."""

    rules: list[RuleResult]
    participants: dict[int, list[str]]  # excluded participant -> reasons
    n_participants: int
    n_trials: int
    n_trials_excluded: int
    trial_only: dict[int, int] = field(default_factory=dict)  # participant -> trials excluded one by one

    @property
    def n_participants_excluded(self) -> int:
        return len(self.participants)

    def to_dict(self) -> dict[str, Any]:
        return {
            "participants": self.n_participants, "participants_excluded": self.n_participants_excluded,
            "trials": self.n_trials, "trials_excluded": self.n_trials_excluded,
            "rules": [{"rule": r.rule, "params": r.params, "participants": r.participants, "trials": r.trials}
                      for r in self.rules],
            "excluded_participants": {str(p): reasons for p, reasons in sorted(self.participants.items())},
            "excluded_trials_of_kept_participants": {str(p): n for p, n in sorted(self.trial_only.items())},
        }

    def lines(self) -> list[str]:
        out = [f"participants: {self.n_participants}, excluded {self.n_participants_excluded}; "
               f"trials: {self.n_trials}, excluded {self.n_trials_excluded}"]
        for r in self.rules:
            out.append(f"  {r.label()}: {counted(len(r.participants), 'participant')}, {counted(r.trials, 'trial')}")
        for p, reasons in sorted(self.participants.items()):
            out.append(f"  participant {p}: {'; '.join(reasons)}")
        for p, n in sorted(self.trial_only.items()):
            out.append(f"  participant {p}: {counted(n, 'trial')} excluded (fidelity_violated)")
        return out


class ExclusionError(ValueError):
    """A rule that cannot be applied (unknown rule, missing parameter)."""


def _sessions(frame: pd.DataFrame, participants: pd.DataFrame | None) -> pd.DataFrame:
    """participant, state, session_excluded, flagged_attention for every participant known."""
    if participants is not None:
        return pd.DataFrame({
            "participant": participants["participant"].astype("int64"),
            "state": participants["state"].astype("object"),
            "session_excluded": participants["session_excluded"].fillna(False).astype(bool),
            "flagged_attention": participants["flags"].fillna("").astype(str).str.contains(ATTENTION_FLAG),
        })
    first = frame.groupby("participant", sort=True).first().reset_index()
    return pd.DataFrame({"participant": first["participant"].astype("int64"),
                         "state": first["session_state"].astype("object"),
                         "session_excluded": first["session_excluded"].fillna(False).astype(bool),
                         "flagged_attention": False})


def fidelity_violations(frame: pd.DataFrame, bound_ms: float) -> pd.Series:
    """Per trial: p95 lateness beyond the strategy's design above ``bound_ms`` (against the schedule where the
    tidy data has no design column), or a stall the participant saw (False where there is no paint log)."""
    late = frame["fidelity_late_p95_ms"] if "fidelity_late_p95_ms" in frame.columns else frame["fidelity_p95_ms"]
    late = pd.to_numeric(late, errors="coerce").fillna(pd.to_numeric(frame["fidelity_p95_ms"], errors="coerce"))
    over = (late > bound_ms).fillna(False)
    if "fidelity_stalls_seen" in frame.columns:
        over |= pd.to_numeric(frame["fidelity_stalls_seen"], errors="coerce").fillna(0) > 0
    return over.astype(bool)


def _rule(rule: Mapping[str, Any], frame: pd.DataFrame, sessions: pd.DataFrame) -> tuple[dict, set[int], pd.Series]:
    """(params, participants excluded, per-trial mask) of one rule."""
    name = rule.get("rule")
    none = pd.Series(False, index=frame.index)
    main = ~frame["practice"].fillna(False).astype(bool)
    if name == "failed_attention":
        ids = set(frame.loc[frame["failed_attention"].fillna(False).astype(bool), "participant"].astype(int))
        ids |= set(sessions.loc[sessions["flagged_attention"], "participant"])
        return {}, ids, none
    if name == "incomplete":
        return {}, set(sessions.loc[sessions["state"] != "completed", "participant"]), none
    if name == "withdrawn":
        return {}, set(sessions.loc[sessions["state"] == "withdrawn", "participant"]), none
    if name == "too_fast":
        if rule.get("min_median_rt_ms") is None:
            raise ExclusionError("too_fast: needs min_median_rt_ms")
        limit = float(rule["min_median_rt_ms"])
        medians = frame.loc[main & frame["response_ms"].notna()].groupby("participant")["response_ms"].median()
        return {"min_median_rt_ms": limit}, {int(p) for p, m in medians.items() if m < limit}, none
    if name == "fidelity_violated":
        bound = float(rule.get("bound_ms", fidelity.DEFAULT_BOUND_MS))
        violated = fidelity_violations(frame, bound)
        params: dict[str, Any] = {"bound_ms": bound}
        if rule.get("max_fraction") is None:
            return params, set(), violated
        params["max_fraction"] = float(rule["max_fraction"])
        logged = main & frame["fidelity_p95_ms"].notna()
        share = violated[logged].groupby(frame.loc[logged, "participant"]).mean()
        return params, {int(p) for p, s in share.items() if s > params["max_fraction"]}, none
    raise ExclusionError(f"exclusions: unknown rule {name!r}; known: {', '.join(RULES)}")


def apply(frame: pd.DataFrame, rules: Iterable[Mapping[str, Any]], *,
          participants: pd.DataFrame | None = None) -> tuple[pd.DataFrame, ExclusionReport]:
    """The trials frame with ``excluded`` and ``exclusion_reason`` filled, and the report.

    ``participants`` (``tidy.participants_frame``) adds the sessions that answered no trial to the report
    (an incomplete session still counts as an excluded participant).
    """
    sessions = _sessions(frame, participants)
    reasons: dict[int, list[str]] = {}
    trial_reasons = pd.Series([[] for _ in range(len(frame))], index=frame.index, dtype=object)
    results = []
    pid = frame["participant"].astype("int64")
    all_rules = [*rules, {"rule": SESSION_EXCLUDED}]
    for rule in all_rules:
        if rule.get("rule") == SESSION_EXCLUDED:
            params, ids, mask = {}, set(sessions.loc[sessions["session_excluded"], "participant"]), None
        else:
            params, ids, mask = _rule(rule, frame, sessions)
        hit = pid.isin(ids)
        if mask is not None:
            hit = hit | mask
        name = rule["rule"]
        for p in sorted(ids):
            reasons.setdefault(int(p), [])
            if name not in reasons[int(p)]:
                reasons[int(p)].append(name)
        for i in hit[hit].index:
            if name not in trial_reasons[i]:
                trial_reasons[i] = [*trial_reasons[i], name]
        if name != SESSION_EXCLUDED or ids:
            results.append(RuleResult(name, params, sorted(int(p) for p in ids), int(hit.sum())))
    out = frame.copy()
    out["excluded"] = pd.array([bool(r) for r in trial_reasons], dtype="boolean")
    out["exclusion_reason"] = pd.array(["; ".join(r) for r in trial_reasons], dtype="string")
    trial_only: dict[int, int] = {}
    for i, r in trial_reasons.items():
        p = int(pid[i])
        if r and p not in reasons:
            trial_only[p] = trial_only.get(p, 0) + 1
    report = ExclusionReport(rules=results, participants=reasons, n_participants=int(sessions["participant"].nunique()),
                             n_trials=len(frame), n_trials_excluded=int(out["excluded"].sum()), trial_only=trial_only)
    return out, report


def mark_participants(participants: pd.DataFrame, report: ExclusionReport) -> pd.DataFrame:
    """The participants frame with ``excluded`` / ``exclusion_reason`` from the report."""
    out = participants.copy()
    ids = out["participant"].astype("int64")
    out["excluded"] = pd.array([int(p) in report.participants for p in ids], dtype="boolean")
    out["exclusion_reason"] = pd.array(["; ".join(report.participants.get(int(p), [])) for p in ids], dtype="string")
    return out


def rules_of(spec: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The exclusion rules of a study file (``[]`` when it has none)."""
    return [dict(r) for r in spec.get("exclusions") or []]
