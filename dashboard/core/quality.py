"""Who gets paid: a per-participant quality report and a suggested approve/reject with its reasons.

Pure Python (no Django): the dashboard hands in plain rows (one mapping per answered trial of the tidy trials
table, one for the participant) and gets back a ``Quality``. The suggestion is only a suggestion: the researcher
decides, and the panel's own rules (Prolific: reject only for clear, fair reasons) apply.

Rules, each with a reason code the dashboard translates:

- ``attention``: more failed attention checks than ``max_attention_failures`` → reject.
- ``catch``: a share of correct adaptive catch trials below ``min_catch_correct`` (with at least
  ``min_catch_trials`` answered) → reject.
- ``straight_lining``: every rating the same value over at least ``straight_line_min`` rating trials of at least
  two conditions → reject.
- ``too_fast``: median response time over main trials below ``min_median_rt_ms`` → reject.
- ``short_session``: time on task below ``min_minutes`` → reject.
- ``tab_hidden``: the page was hidden while a stream played on more than ``max_hidden_fraction`` of the trials
  → reject (they did not watch what they judged).
- ``fidelity``: trials painted later than the bound are the machine's fault, never the participant's: a note,
  never a reason to reject (the analysis may exclude those trials).

Sessions that did not complete get no suggestion: returned, timed-out and screened-out submissions are settled
by the panel's own flows.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, field
from datetime import datetime
from typing import Any

APPROVE = "approve"
REJECT = "reject"
DECISIONS = (APPROVE, REJECT)
CATCH_CHECK = "adaptive-catch"  # studyapp.adaptive_trials marks catch trials with this attention-check id


@dataclass(frozen=True)
class Rules:
    max_attention_failures: int = 0
    min_catch_correct: float = 0.75
    min_catch_trials: int = 2
    straight_line_min: int = 5
    min_median_rt_ms: float = 0.0  # 0: no rule (a study's ``too_fast`` exclusion sets it)
    min_minutes: float = 0.0  # 0: no rule
    max_hidden_fraction: float = 0.5


@dataclass(frozen=True)
class Reason:
    code: str
    text: str  # English, for the CSV and the log; the dashboard shows a translation of ``code`` with ``params``
    params: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Quality:
    participant: Any
    state: str
    attention_answered: int
    attention_failed: int
    catch_answered: int
    catch_correct: int
    ratings: int
    rating_values: int  # distinct rating values given
    rating_conditions: int
    straight_lined: bool
    fidelity_checked: int
    fidelity_violated: int
    trials: int
    hidden_trials: int
    visibility_changes: int
    median_rt_ms: float | None
    minutes_on_task: float | None
    suggestion: str | None
    reasons: tuple[Reason, ...]
    notes: tuple[Reason, ...]

    @property
    def reason_text(self) -> str:
        """One line for the decision form and the CSV: why the suggestion is what it is."""
        if self.reasons:
            return "; ".join(r.text for r in self.reasons)
        if self.suggestion == APPROVE:
            return "completed; all checks passed"
        return "; ".join(r.text for r in self.notes)

    def as_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["reason_text"] = self.reason_text
        return out


def _missing(value: Any) -> bool:
    if value is None:
        return True
    try:
        return bool(value != value)  # NaN and pandas' NA
    except (TypeError, ValueError):
        return True


def _truthy(value: Any) -> bool:
    return not _missing(value) and bool(value) and value not in ("False", "false", "0")


def _number(value: Any) -> float | None:
    if _missing(value):
        return None
    try:
        out = float(value)
    except (TypeError, ValueError):
        return None
    return out if math.isfinite(out) else None


def _minutes(started: Any, finished: Any) -> float | None:
    if _missing(started) or _missing(finished):
        return None
    if isinstance(started, str):
        started = datetime.fromisoformat(started)
    if isinstance(finished, str):
        finished = datetime.fromisoformat(finished)
    return (finished - started).total_seconds() / 60.0


def rules_from_spec(spec: Mapping[str, Any]) -> Rules:
    """The study's own limits where it sets them: attention-check tolerance and the ``too_fast`` exclusion."""
    checks = spec.get("attention_checks") or {}
    min_rt = 0.0
    for rule in spec.get("exclusions") or []:
        if isinstance(rule, Mapping) and rule.get("rule") == "too_fast":
            min_rt = float(rule.get("min_median_rt_ms") or 0.0)
    return Rules(max_attention_failures=int(checks.get("max_failures", 0) or 0), min_median_rt_ms=min_rt)


def assess(participant: Mapping[str, Any], trials: Iterable[Mapping[str, Any]], *, rules: Rules = Rules(),
           visibility_changes: int = 0) -> Quality:
    """The quality report of one participant from their answered trials (rows of the tidy trials table)."""
    rows = list(trials)
    state = str(participant.get("state") or "")
    main = [t for t in rows if not _truthy(t.get("practice"))]
    checks = [t for t in rows if not _missing(t.get("attention_check")) and str(t.get("attention_check"))]
    catch = [t for t in checks if _truthy(t.get("catch")) or str(t.get("attention_check")) == CATCH_CHECK]
    attention = [t for t in checks if t not in catch]
    failed = sum(1 for t in attention
                 if not _missing(t.get("attention_passed")) and not _truthy(t.get("attention_passed")))
    correct = sum(1 for t in catch if _truthy(t.get("attention_passed")))
    ordinary = [t for t in main if t not in checks]
    rated = [(t.get("condition"), _number(t.get("response_value"))) for t in ordinary
             if t.get("trial_type") == "rating" and _number(t.get("response_value")) is not None]
    values = {v for _, v in rated}
    conditions = {c for c, _ in rated}
    straight = len(rated) >= rules.straight_line_min and len(values) == 1 and len(conditions) >= 2
    checked = [t for t in rows if not _missing(t.get("fidelity_violated"))]
    violated = sum(1 for t in checked if _truthy(t.get("fidelity_violated")))
    hidden = sum(1 for t in rows if _truthy(t.get("tab_hidden")))
    rts = [v for v in (_number(t.get("response_ms")) for t in ordinary) if v is not None]
    median_rt = statistics.median(rts) if rts else None
    minutes = _minutes(participant.get("started_at"), participant.get("finished_at"))

    reasons: list[Reason] = []
    notes: list[Reason] = []
    if failed > rules.max_attention_failures:
        reasons.append(Reason("attention", f"failed {failed} of {len(attention)} attention checks",
                              {"failed": failed, "answered": len(attention)}))
    if len(catch) >= rules.min_catch_trials and correct / len(catch) < rules.min_catch_correct:
        reasons.append(Reason("catch", f"answered {correct} of {len(catch)} catch trials correctly",
                              {"correct": correct, "answered": len(catch)}))
    if straight:
        value = next(iter(values))
        shown = int(value) if value == int(value) else value
        reasons.append(Reason("straight_lining", f"gave every one of {len(rated)} ratings the same value ({shown})",
                              {"n": len(rated), "value": shown}))
    if rules.min_median_rt_ms and median_rt is not None and median_rt < rules.min_median_rt_ms:
        reasons.append(Reason("too_fast",
                              f"median response time {median_rt:.0f} ms is below {rules.min_median_rt_ms:.0f} ms",
                              {"median_ms": round(median_rt), "min_ms": rules.min_median_rt_ms}))
    if rules.min_minutes and minutes is not None and minutes < rules.min_minutes:
        reasons.append(Reason("short_session", f"finished in {minutes:.1f} min, below {rules.min_minutes:g} min",
                              {"minutes": round(minutes, 1), "min_minutes": rules.min_minutes}))
    if rows and hidden / len(rows) > rules.max_hidden_fraction:
        reasons.append(Reason("tab_hidden", f"the page was hidden during {hidden} of {len(rows)} trials",
                              {"hidden": hidden, "trials": len(rows)}))
    if violated:
        notes.append(Reason("fidelity", f"{violated} of {len(checked)} trials were painted late (not the "
                                        "participant's fault)", {"violated": violated, "checked": len(checked)}))
    if hidden and not any(r.code == "tab_hidden" for r in reasons):
        notes.append(Reason("tab_hidden_some", f"the page was hidden during {hidden} of {len(rows)} trials",
                            {"hidden": hidden, "trials": len(rows)}))

    if state != "completed":
        suggestion = None
        notes.insert(0, Reason("not_completed", f"did not complete ({state or 'unknown'}): the panel settles it",
                               {"state": state}))
    else:
        suggestion = REJECT if reasons else APPROVE
    return Quality(
        participant=participant.get("participant"), state=state,
        attention_answered=len(attention), attention_failed=failed,
        catch_answered=len(catch), catch_correct=correct,
        ratings=len(rated), rating_values=len(values), rating_conditions=len(conditions), straight_lined=straight,
        fidelity_checked=len(checked), fidelity_violated=violated,
        trials=len(rows), hidden_trials=hidden, visibility_changes=int(visibility_changes),
        median_rt_ms=round(median_rt, 1) if median_rt is not None else None,
        minutes_on_task=round(minutes, 2) if minutes is not None else None,
        suggestion=suggestion, reasons=tuple(reasons), notes=tuple(notes),
    )


def assess_all(participants: Iterable[Mapping[str, Any]], trials: Iterable[Mapping[str, Any]], *,
               rules: Rules = Rules(), visibility_changes: Mapping[Any, int] | None = None) -> list[Quality]:
    """``assess`` for every participant; trials are matched on their ``participant`` key."""
    by_participant: dict[Any, list[Mapping[str, Any]]] = {}
    for t in trials:
        by_participant.setdefault(t.get("participant"), []).append(t)
    changes = visibility_changes or {}
    return [assess(p, by_participant.get(p.get("participant"), []), rules=rules,
                   visibility_changes=changes.get(p.get("participant"), 0)) for p in participants]
