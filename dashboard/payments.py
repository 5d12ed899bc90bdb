"""Payment decisions and the files a panel takes: a researcher's decisions (writes), the payment, approval and
bonus CSVs, and the reconciliation with the panel's export.

The quality report (``dashboard.core.quality``, read through ``dashboard.selectors.review``) only *suggests*; what the
researcher decided is a ``PaymentDecision``. The two are never mixed up: a file says which it holds, and nothing a
panel acts on (the approve and reject lists, the bonuses) contains a suggestion nobody reviewed unless asked for
with ``source=suggested``, and then its name says so.

A rejection needs a reason the participant will read: one of the study's ``payments.rejection_reasons`` (by id)
or one the researcher writes. The suggestion's own text is never used as a decision's reason.

CSV formats (docs/dashboard.md, "Paying participants"):

- ``payments.csv``: ``participant_id,session,state,suggested,suggested_reason,decision,reason,decided_by,
  decided_at`` for every completed session with a panel id; ``decision`` is empty while undecided.
- ``payments.csv?decision=approve`` (or ``reject``): one column headed with the panel's participant parameter
  (``PROLIFIC_PID``), one id per row, the researcher's decisions only: the list Prolific's bulk approve takes.
  ``&source=suggested`` gives the undecided sessions with that suggestion instead.
- ``bonuses.csv``: ``<participant_id>,<amount>`` per line and no header, Prolific's bulk bonus format, for the
  sessions the researcher approved whose bonus is above zero.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable
from decimal import Decimal
from typing import Any

from django.db import transaction

from dashboard.core import quality, reconcile
from dashboard.models import PaymentDecision
from dashboard.selectors import review as review
from studyapp.models import Session, Study

SOURCES = ("decided", "suggested")


class DecisionRefused(Exception):
    """A decision that cannot be stored (unknown decision, a rejection without a reason, a session of another
    study or one that did not complete); the message says why."""


def participant_param(spec: dict) -> str:
    """The panel's name for its participant id (``PROLIFIC_PID`` unless the study file renames it)."""
    params = (spec.get("recruitment") or {}).get("params") or {}
    return str(params.get("participant") or "PROLIFIC_PID")


def _reason(study: Study, decision: str, reason: str, reason_id: str) -> tuple[str, str]:
    """The (text, id) stored with a decision; a rejection without one is refused."""
    reason = (reason or "").strip()
    reason_id = (reason_id or "").strip()
    if len(reason) > 2000:
        raise DecisionRefused("reason: at most 2000 characters")
    if reason_id:
        known = {r["id"]: r["text"] for r in review.rejection_reasons(study.spec)}
        if reason_id not in known:
            raise DecisionRefused(f"reason_id: {reason_id!r} is not one of the study's rejection reasons "
                                  f"({', '.join(known)})")
        if decision != quality.REJECT:
            raise DecisionRefused("reason_id: rejection reasons are for rejections")
        return (reason or known[reason_id]), reason_id
    if decision == quality.REJECT and not reason:
        raise DecisionRefused("reason: a rejection needs a reason the participant will read: choose one of the "
                              "study's rejection reasons or write one")
    return reason, ""


def payment_decide_many(*, study: Study, session_ids: Iterable[int], decision: str, reason: str = "",
                        reason_id: str = "", by) -> list[PaymentDecision]:
    """Store (or replace) the same decision for each of ``session_ids``: all of them or, refused, none."""
    if decision not in quality.DECISIONS:
        raise DecisionRefused(f"decision: must be one of {', '.join(quality.DECISIONS)}")
    ids = sorted({int(i) for i in session_ids})
    if not ids:
        raise DecisionRefused("session: select at least one participant")
    text, rid = _reason(study, decision, reason, reason_id)
    with transaction.atomic():
        sessions = {s.pk: s for s in Session.objects.select_for_update()
                    .filter(pk__in=ids, study=study, preview=False)}
        missing = [i for i in ids if i not in sessions]
        if missing:
            raise DecisionRefused(f"session: {', '.join(map(str, missing[:10]))} not a participant of this study")
        unfinished = [i for i in ids if sessions[i].state != Session.State.COMPLETED]
        if unfinished:
            raise DecisionRefused(f"session: {', '.join(map(str, unfinished[:10]))} did not complete: the panel "
                                  "settles returned, timed-out and screened-out submissions")
        rows = [PaymentDecision.objects.update_or_create(
            session=sessions[i], defaults={"decision": decision, "reason": text, "reason_id": rid,
                                           "decided_by": by})[0] for i in ids]
    return rows


def payment_decide(*, study: Study, session_id: int, decision: str, reason: str = "", reason_id: str = "",
                   by) -> PaymentDecision:
    """Store (or replace) the researcher's decision for one session of ``study``."""
    return payment_decide_many(study=study, session_ids=[session_id], decision=decision, reason=reason,
                               reason_id=reason_id, by=by)[0]


def approve_suggested(*, study: Study, session_ids: Iterable[int], by) -> list[PaymentDecision]:
    """Approve those of ``session_ids`` (the rows the researcher had in front of them) whose suggestion is approve
    and that nobody decided yet. Sessions suggested for rejection, and decided ones, are left as they are."""
    rows = review.review_rows(study, session_ids=list(session_ids))
    due = [r["session"] for r in rows if r["state"] == Session.State.COMPLETED
           and r["suggestion"] == quality.APPROVE and r["decision"] is None]
    if not due:
        return []
    return payment_decide_many(study=study, session_ids=due, decision=quality.APPROVE, by=by)


# --- files ------------------------------------------------------------------------------------------------------


def _due(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [r for r in rows if r["state"] == Session.State.COMPLETED and r["panel_pid"]]


def payments_csv(study: Study, rows: list[dict[str, Any]], decision: str | None = None,
                 source: str = "decided") -> str:
    """The CSV text: every completed session's suggestion and decision, or (``decision`` given) the panel ids
    the researcher decided that way (``source="suggested"``: the undecided ones suggested that way)."""
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    due = _due(rows)
    if decision is not None:
        if decision not in quality.DECISIONS:
            raise DecisionRefused(f"decision: must be one of {', '.join(quality.DECISIONS)}")
        if source not in SOURCES:
            raise DecisionRefused(f"source: must be one of {', '.join(SOURCES)}")
        writer.writerow([participant_param(study.spec)])
        if source == "decided":
            writer.writerows([r["panel_pid"]] for r in due if r["decision"] == decision)
        else:
            writer.writerows([r["panel_pid"]] for r in due if r["decision"] is None and r["suggestion"] == decision)
        return buf.getvalue()
    writer.writerow(["participant_id", "session", "state", "suggested", "suggested_reason", "decision", "reason",
                     "decided_by", "decided_at"])
    for r in due:
        d = r["decided"]
        writer.writerow([r["panel_pid"], r["session"], r["state"], r["suggestion"] or "", r["suggested_reason"],
                         r["decision"] or "", r["reason"],
                         (d.decided_by.get_username() if d and d.decided_by else ""),
                         d.decided_at.isoformat(timespec="seconds") if d else ""])
    return buf.getvalue()


def bonus_rows(rows: list[dict[str, Any]]) -> list[tuple[str, Decimal]]:
    """(panel id, amount) of every approved (decided) completed session with a bonus above zero."""
    return [(r["panel_pid"], r["bonus"]) for r in _due(rows)
            if r["decision"] == quality.APPROVE and r["bonus"] is not None and r["bonus"] > 0]


def bonuses_csv(rows: list[dict[str, Any]]) -> str:
    """Prolific's bulk bonus list: ``<participant_id>,<amount>`` per line, no header."""
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerows([pid, f"{amount:.2f}"] for pid, amount in bonus_rows(rows))
    return buf.getvalue()


def reconcile_export(study: Study, text: str) -> reconcile.Reconciliation:
    """The panel's export against this study's sessions (``reconcile.ExportError`` for an unreadable file)."""
    panel = reconcile.parse_export(text)
    sessions = [review.session_facts(study, s) for s in Session.objects.filter(study=study, preview=False)
                .values(*review.SESSION_FIELDS)]
    return reconcile.reconcile(panel, sessions)
