"""Payment decisions: the quality report of a study's participants (a read), a researcher's decision (a write) and
the CSV a panel's bulk approval accepts.

The report reads the tidy trials table (``analysis.selectors.study_frame``: the same numbers the analysis uses)
and the paint logs of the answered showings (visibility changes), then ``dashboard.quality`` suggests. The
decision a researcher stores wins over the suggestion in the export.

CSV formats (docs/dashboard.md, "Paying participants"):

- ``payments.csv``: ``participant_id,decision,reason,session,source`` for every completed session with a panel
  id; ``source`` is ``researcher`` (a stored decision) or ``suggested``.
- ``payments.csv?decision=approve`` (or ``reject``): one column headed with the panel's participant parameter
  (``PROLIFIC_PID``), one id per row: the list Prolific's bulk approve (or reject) takes.
"""

from __future__ import annotations

import csv
import io
from typing import Any

from django.db import transaction

from analysis.selectors import answered_showings, study_frame
from dashboard import quality
from dashboard.models import PaymentDecision
from playback import fidelity
from playback.models_delivery import PaintReport
from studyapp.models import Session, Study


class DecisionRefused(Exception):
    """A decision that cannot be stored (unknown decision, a session of another study); the message says why."""


def _records(frame) -> list[dict[str, Any]]:
    return frame.astype(object).where(frame.notna(), None).to_dict("records") if len(frame) else []


def visibility_changes(study: Study) -> dict[int, int]:
    """Per session: how often the page turned hidden or visible while an answered showing painted."""
    links = dict(answered_showings(study).values_list("playback_id", "trial__session_id"))
    entries: dict[int, list] = {}
    for pid, batch in PaintReport.objects.filter(playback_id__in=list(links)).values_list("playback_id", "entries"):
        entries.setdefault(pid, []).extend(batch if isinstance(batch, list) else [])
    out: dict[int, int] = {}
    for pid, rows in entries.items():
        session = links[pid]
        out[session] = out.get(session, 0) + fidelity.summarize(rows).visibility_changes
    return out


def quality_report(study: Study) -> list[dict[str, Any]]:
    """One row per non-preview session: its quality, the suggestion and the stored decision (if any)."""
    trials, participants = study_frame(study)
    people = _records(participants)
    reports = quality.assess_all(people, _records(trials), rules=quality.rules_from_spec(study.spec),
                                 visibility_changes=visibility_changes(study))
    decisions = {d.session_id: d for d in PaymentDecision.objects.filter(session__study=study)
                 .select_related("decided_by")}
    rows = []
    for person, report in zip(people, reports, strict=True):
        decided = decisions.get(person["participant"])
        effective = decided.decision if decided else report.suggestion
        rows.append({"session": person["participant"], "panel_pid": person.get("panel_pid") or "",
                     "state": person.get("state"), "quality": report, "decided": decided,
                     "decision": effective, "reason": decided.reason if decided else report.reason_text,
                     "source": "researcher" if decided else "suggested"})
    return rows


def payment_decide(*, study: Study, session_id: int, decision: str, reason: str, by) -> PaymentDecision:
    """Store (or replace) the researcher's decision for one session of ``study``."""
    if decision not in quality.DECISIONS:
        raise DecisionRefused(f"decision: must be one of {', '.join(quality.DECISIONS)}")
    if len(reason) > 2000:
        raise DecisionRefused("reason: at most 2000 characters")
    with transaction.atomic():
        session = Session.objects.filter(pk=session_id, study=study, preview=False).first()
        if session is None:
            raise DecisionRefused("session: not a participant of this study")
        row, _ = PaymentDecision.objects.update_or_create(
            session=session, defaults={"decision": decision, "reason": reason.strip(), "decided_by": by})
    return row


def participant_param(spec: dict) -> str:
    """The panel's name for its participant id (``PROLIFIC_PID`` unless the study file renames it)."""
    params = (spec.get("recruitment") or {}).get("params") or {}
    return str(params.get("participant") or "PROLIFIC_PID")


def payments_csv(study: Study, rows: list[dict[str, Any]], decision: str | None = None) -> str:
    """The CSV text: every completed session's decision, or (``decision`` given) the ids with that decision."""
    due = [r for r in rows if r["state"] == Session.State.COMPLETED and r["panel_pid"] and r["decision"]]
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    if decision is not None:
        if decision not in quality.DECISIONS:
            raise DecisionRefused(f"decision: must be one of {', '.join(quality.DECISIONS)}")
        writer.writerow([participant_param(study.spec)])
        writer.writerows([r["panel_pid"]] for r in due if r["decision"] == decision)
        return buf.getvalue()
    writer.writerow(["participant_id", "decision", "reason", "session", "source"])
    writer.writerows([r["panel_pid"], r["decision"], r["reason"], r["session"], r["source"]] for r in due)
    return buf.getvalue()
