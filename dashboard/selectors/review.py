"""Reads for reviewing a study's submissions: each session's quality report (cached), the facts a panel's list
shows (completion code given, submission time, duration), the researcher's decision, and the review table's
filters, sort and pages.

The quality report of a session is computed from the tidy trials table and the paint logs (``dashboard.payments``
explains the rules) and kept in ``QualitySummary``: a page of a thousand sessions then reads two tables instead of
rebuilding every trial. A summary is recomputed when the study file, the session's state, end, flags or exclusion
changed, while the session is still running (at most every ``REFRESH_S``), and until it has been ``GRACE_S``
past the session's end (a paint log may arrive after the last answer).
"""

from __future__ import annotations

import json
import time
import zlib
from collections import Counter
from collections.abc import Iterable, Mapping
from datetime import datetime, timedelta
from typing import Any

from django.db import transaction
from django.utils import timezone

from analysis.selectors import answered_showings, study_frame
from dashboard.core import bonuses, quality
from dashboard.models import PaymentDecision, QualitySummary
from playback.core import fidelity
from playback.models.delivery import PaintReport
from studyapp.models import Session, Study

GRACE_S = 120.0
REFRESH_S = 30.0
CHUNK = 250  # sessions per recomputation (bounded memory for the tidy table)
PAGE_CHUNK = 10  # sessions per recomputation while a page waits
PAGE_BUDGET_S = 1.5  # at most this long computing reports for a page; the rest is left to quality_refresh
END_LINK = {"completed": "completion", "screened_out": "screen_out", "timed_out": "returned",
            "returned": "returned", "withdrawn": "returned"}  # as studyapp.views.participant sends them
DEFAULT_REJECTION_REASONS = (  # English: the panel shows this text to the participant
    {"id": "attention", "text": "You did not pass the study's attention checks (the instructions asked for a "
                                "specific answer on those trials)."},
    {"id": "no_code", "text": "Your submission has no valid completion code: the study shows one on its last "
                              "page when it is finished."},
    {"id": "returned", "text": "You left the study before its end, so there is no complete set of answers."},
)
SESSION_FIELDS = ("id", "panel_pid", "state", "group", "flags", "excluded", "started_at", "finished_at")
SORTS = ("participant", "state", "group", "minutes", "attention", "catch", "late", "median_rt", "hidden",
         "suggested", "decision", "finished")
PER_PAGE = (50, 100, 200)


# --- the study file's payment settings --------------------------------------------------------------------------


def rejection_reasons(spec: Mapping[str, Any]) -> list[dict[str, str]]:
    """The reasons a researcher may pick when rejecting: the study file's, else PaceLab's three defaults."""
    given = (spec.get("payments") or {}).get("rejection_reasons")
    return [dict(r) for r in (given or DEFAULT_REJECTION_REASONS)]


def code_given(spec: Mapping[str, Any], state: str) -> str:
    """The code the participant was shown at the end of a session in ``state`` (empty: none)."""
    link = (spec.get("recruitment") or {}).get(END_LINK.get(state, "")) or {}
    return str(link.get("code") or "")


# --- quality summaries ------------------------------------------------------------------------------------------


def _key(study: Study, s: Mapping[str, Any]) -> str:
    flags = zlib.crc32(json.dumps(s["flags"], sort_keys=True, default=str).encode())
    end = s["finished_at"].isoformat() if s["finished_at"] else ""
    return f"{study.spec_hash[:16]}|{s['state']}|{end}|{int(bool(s['excluded']))}|{flags:x}"[:200]


def _records(frame) -> list[dict[str, Any]]:
    return frame.astype(object).where(frame.notna(), None).to_dict("records") if len(frame) else []


def visibility_changes(study: Study, sessions: Iterable[int] | None = None) -> dict[int, int]:
    """Per session: how often the page turned hidden or visible while an answered showing painted."""
    links_qs = answered_showings(study)
    if sessions is not None:
        links_qs = links_qs.filter(trial__session_id__in=list(sessions))
    links = dict(links_qs.values_list("playback_id", "trial__session_id"))
    entries: dict[int, list] = {}
    for pid, batch in PaintReport.objects.filter(playback_id__in=list(links)).values_list("playback_id", "entries"):
        entries.setdefault(pid, []).extend(batch if isinstance(batch, list) else [])
    out: dict[int, int] = {}
    for pid, rows in entries.items():
        session = links[pid]
        out[session] = out.get(session, 0) + fidelity.summarize(rows).visibility_changes
    return out


def _compute(study: Study, ids: list[int]) -> dict[int, dict[str, Any]]:
    trials, participants = study_frame(study, sessions=ids)
    people = _records(participants)
    reports = quality.assess_all(people, _records(trials), rules=quality.rules_from_spec(study.spec),
                                 visibility_changes=visibility_changes(study, ids))
    return {int(p["participant"]): r.as_dict() for p, r in zip(people, reports, strict=True)}


def summaries(study: Study, sessions: list[Mapping[str, Any]], *, now: datetime | None = None,
              budget_s: float | None = None) -> dict[int, dict[str, Any]]:
    """The quality report (``Quality.as_dict()``) of each of ``sessions`` (rows with ``SESSION_FIELDS``),
    from the cache where it is still valid; the others are computed and stored. With ``budget_s`` (a page) the
    computing stops once that much time was spent (after one small chunk at least): the sessions left out are
    missing from the answer, for ``quality_refresh`` to fill in the background."""
    now = now or timezone.now()
    started = time.monotonic()
    chunk_size = CHUNK if budget_s is None else PAGE_CHUNK
    ids = [s["id"] for s in sessions]
    cached = {row["session_id"]: row for row in QualitySummary.objects.filter(session_id__in=ids)
              .values("session_id", "key", "final", "data", "computed_at")}
    out: dict[int, dict[str, Any]] = {}
    stale: list[Mapping[str, Any]] = []
    for s in sessions:
        c = cached.get(s["id"])
        if c and c["key"] == _key(study, s) and (c["final"] or now - c["computed_at"] < timedelta(seconds=REFRESH_S)):
            out[s["id"]] = c["data"]
        else:
            stale.append(s)
    for i in range(0, len(stale), chunk_size):
        if budget_s is not None and i and time.monotonic() - started >= budget_s:
            break
        chunk = stale[i:i + chunk_size]
        fresh = _compute(study, [s["id"] for s in chunk])
        rows = []
        for s in chunk:
            data = fresh.get(s["id"])
            if data is None:
                continue
            final = bool(s["state"] != Session.State.ACTIVE and s["finished_at"]
                         and now - s["finished_at"] >= timedelta(seconds=GRACE_S))
            rows.append(QualitySummary(session_id=s["id"], key=_key(study, s), final=final,
                                       data=json.loads(json.dumps(data, default=str)), computed_at=now))
            out[s["id"]] = rows[-1].data
        with transaction.atomic():
            QualitySummary.objects.bulk_create(rows, update_conflicts=True, unique_fields=["session"],
                                               update_fields=["key", "final", "data", "computed_at"])
    return out


# --- rows of the review table -----------------------------------------------------------------------------------


def _duration_s(s: Mapping[str, Any]) -> float | None:
    if not s["finished_at"] or not s["started_at"]:
        return None
    return round((s["finished_at"] - s["started_at"]).total_seconds(), 1)


def session_facts(study: Study, s: Mapping[str, Any]) -> dict[str, Any]:
    """What a panel's submissions list shows of a session: code given, submission time, duration."""
    return {"session": s["id"], "panel_pid": s["panel_pid"] or "", "state": s["state"], "group": s["group"] or "",
            "flags": s["flags"] or [], "excluded": s["excluded"], "started_at": s["started_at"],
            "finished_at": s["finished_at"], "duration_s": _duration_s(s),
            "code_given": code_given(study.spec, s["state"])}


def quality_refresh(study: Study) -> int:
    """Compute and store every quality report of ``study`` that is missing or out of date; how many sessions
    the study has (``dashboard.tasks.quality_refresh`` runs it after a page had to leave some out)."""
    sessions = list(Session.objects.filter(study=study, preview=False).values(*SESSION_FIELDS))
    summaries(study, sessions)
    return len(sessions)


def review_rows(study: Study, *, session_ids: Iterable[int] | None = None,
                budget_s: float | None = None) -> list[dict[str, Any]]:
    """One row per participant (non-preview session), oldest first: facts, quality, suggestion, decision, bonus.
    With ``budget_s`` some reports may still be missing: those rows say ``pending``."""
    qs = Session.objects.filter(study=study, preview=False)
    if session_ids is not None:
        qs = qs.filter(pk__in=list(session_ids))
    sessions = list(qs.order_by("started_at", "id").values(*SESSION_FIELDS))
    reports = summaries(study, sessions, budget_s=budget_s)
    stored = PaymentDecision.objects.filter(session__study=study).select_related("decided_by")
    if session_ids is not None:
        stored = stored.filter(session_id__in=[s["id"] for s in sessions])
    decisions = {d.session_id: d for d in stored}
    rule = bonuses.rule_from_spec(study.spec)
    rows = []
    for s in sessions:
        q = reports.get(s["id"]) or {}
        decided = decisions.get(s["id"])
        rows.append({**session_facts(study, s), "quality": q, "pending": s["id"] not in reports,
                     "suggestion": q.get("suggestion"),
                     "suggested_reason": q.get("reason_text") or "", "decided": decided,
                     "decision": decided.decision if decided else None, "reason": decided.reason if decided else "",
                     "bonus": bonuses.amount(rule, q) if not rule.empty else None})
    return rows


# --- filters, sort, pages ---------------------------------------------------------------------------------------


def _sort_key(name: str):
    def q(r, k):
        return (r["quality"] or {}).get(k)

    return {
        "participant": lambda r: r["session"], "state": lambda r: r["state"], "group": lambda r: r["group"],
        "minutes": lambda r: q(r, "minutes_on_task"), "attention": lambda r: q(r, "attention_failed"),
        "catch": lambda r: (q(r, "catch_correct") / q(r, "catch_answered")) if q(r, "catch_answered") else None,
        "late": lambda r: q(r, "fidelity_violated"), "median_rt": lambda r: q(r, "median_rt_ms"),
        "hidden": lambda r: q(r, "hidden_trials"), "suggested": lambda r: r["suggestion"],
        "decision": lambda r: r["decision"], "finished": lambda r: r["finished_at"],
    }[name]


def _float(value: Any) -> float | None:
    try:
        return float(value) if value not in (None, "") else None
    except (TypeError, ValueError):
        return None


def filter_rows(rows: list[dict[str, Any]], params: Mapping[str, str]) -> list[dict[str, Any]]:
    """The rows the researcher asked for: ``state``, ``suggested`` (approve, reject, none), ``decided`` (approve,
    reject, undecided), ``group``, ``attention`` (passed, failed), ``flagged`` (yes, no), ``shorter_than``
    (minutes on task), ``q`` (an id)."""
    out = rows
    if params.get("state"):
        out = [r for r in out if r["state"] == params["state"]]
    if params.get("suggested"):
        want = None if params["suggested"] == "none" else params["suggested"]
        out = [r for r in out if r["suggestion"] == want]
    if params.get("decided"):
        want = None if params["decided"] == "undecided" else params["decided"]
        out = [r for r in out if r["decision"] == want]
    if params.get("group"):
        out = [r for r in out if r["group"] == params["group"]]
    if params.get("attention") in ("passed", "failed"):
        failed = params["attention"] == "failed"
        out = [r for r in out if bool((r["quality"] or {}).get("attention_failed")) == failed]
    if params.get("flagged") in ("yes", "no"):
        flagged = params["flagged"] == "yes"
        out = [r for r in out if bool(r["flags"]) == flagged]
    limit = _float(params.get("shorter_than"))
    if limit is not None:
        out = [r for r in out if ((r["quality"] or {}).get("minutes_on_task") is not None
                                  and r["quality"]["minutes_on_task"] < limit)]
    if params.get("q"):
        needle = params["q"].strip().lstrip("#").lower()
        out = [r for r in out if needle in r["panel_pid"].lower() or needle == str(r["session"])]
    return out


def sort_rows(rows: list[dict[str, Any]], sort: str) -> list[dict[str, Any]]:
    """Sorted by one of ``SORTS`` (``-name`` descending); rows without a value go last either way."""
    name = sort.lstrip("-") if sort else "participant"
    if name not in SORTS:
        name = "participant"
    key = _sort_key(name)
    present = [r for r in rows if key(r) is not None]
    missing = [r for r in rows if key(r) is None]
    return sorted(present, key=key, reverse=sort.startswith("-")) + missing


def page_of(rows: list[dict[str, Any]], page: Any, per_page: Any) -> dict[str, Any]:
    """One page of ``rows`` and where it sits (numbers, not links: the template keeps the other parameters)."""
    size = int(per_page) if str(per_page).isdigit() and int(per_page) in PER_PAGE else PER_PAGE[0]
    pages = max(1, -(-len(rows) // size))
    number = min(max(int(page), 1), pages) if str(page).isdigit() else 1
    start = (number - 1) * size
    return {"rows": rows[start:start + size], "number": number, "pages": pages, "per_page": size,
            "total": len(rows), "first": start + 1 if rows else 0, "last": min(start + size, len(rows)),
            "previous": number - 1 if number > 1 else None, "next": number + 1 if number < pages else None}


def counts(rows: list[dict[str, Any]]) -> dict[str, int]:
    """The review's progress over completed sessions: suggested and decided, each way."""
    done = [r for r in rows if r["state"] == Session.State.COMPLETED]
    c = Counter()
    for r in done:
        c[f"suggested_{r['suggestion']}"] += 1
        c[f"decided_{r['decision'] or 'none'}"] += 1
        if r["suggestion"] == quality.APPROVE and r["decision"] is None:
            c["approvable"] += 1
    return {"completed": len(done), "pending": sum(1 for r in rows if r.get("pending")),
            "suggested_approve": c["suggested_approve"],
            "suggested_reject": c["suggested_reject"], "approve": c["decided_approve"],
            "reject": c["decided_reject"], "undecided": c["decided_none"], "approvable": c["approvable"]}
