"""Reconciling PaceLab's sessions with the panel's own list of submissions (Prolific's export).

Pure Python (no Django). Prolific's study export ("Download summary" / the demographic export) is a CSV whose first
columns are ``Submission id, Participant id, Status, Custom study tncs accepted at, Started at, Completed at,
Reviewed at, Archived at, Time taken, Completion code, Total approvals`` followed by demographics; ``Status`` is one
of the submission statuses (``ACTIVE``, ``AWAITING REVIEW``, ``APPROVED``, ``REJECTED``, ``RETURNED``,
``TIMED-OUT``, ``SCREENED OUT``, ``RESERVED``: docs.prolific.com, "Submission object"). Headers are matched without
regard to case, spaces or underscores, because Prolific has reworded them before.

Mismatches, per participant id:

- ``in_panel_not_here``: the panel has a submission, PaceLab has no session with that id;
- ``here_not_completed``: the panel says submitted (awaiting review, approved, rejected) but the session here did
  not complete;
- ``code_mismatch``: the completion code on the panel is not the code PaceLab gave this session (``NOCODE``, a
  typo, a screen-out code for a completed session);
- ``here_not_in_panel``: a session here whose participant id the export does not list (added: the other side of
  the first kind).
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

PARTICIPANT = "participant id"
STATUS = "status"
CODE = "completion code"
OPTIONAL = ("submission id", "started at", "completed at", "time taken")
SUBMITTED = frozenset({"AWAITING REVIEW", "APPROVED", "REJECTED"})
KINDS = ("in_panel_not_here", "here_not_completed", "code_mismatch", "here_not_in_panel")
MAX_BYTES = 20 * 1024 * 1024


class ExportError(ValueError):
    """An export that cannot be read; the message names the line or the missing column."""


@dataclass(frozen=True)
class PanelRow:
    line: int
    participant: str
    status: str
    code: str | None  # None: the export has no completion-code column
    submission: str = ""
    started_at: str = ""
    completed_at: str = ""
    time_taken: str = ""


@dataclass
class Reconciliation:
    panel_rows: int = 0
    sessions: int = 0
    matched: int = 0
    has_codes: bool = True
    duplicates: list[str] = field(default_factory=list)
    mismatches: dict[str, list[dict[str, Any]]] = field(default_factory=lambda: {k: [] for k in KINDS})

    @property
    def total(self) -> int:
        return sum(len(v) for v in self.mismatches.values())


def _key(header: str) -> str:
    return re.sub(r"[\s_]+", " ", header.replace("\ufeff", "")).strip().lower()


def parse_export(text: str) -> list[PanelRow]:
    """The rows of a Prolific export; ``ExportError`` names what is wrong (never a traceback)."""
    if len(text) > MAX_BYTES:
        raise ExportError("the export is larger than 20 MB")
    reader = csv.reader(io.StringIO(text.lstrip("\ufeff")))
    try:
        header = next(reader)
    except StopIteration:
        raise ExportError("the export is empty") from None
    except csv.Error as exc:
        raise ExportError(f"line 1: not a CSV file ({exc})") from None
    columns = {_key(h): i for i, h in reversed(list(enumerate(header)))}
    for needed, label in ((PARTICIPANT, "Participant id"), (STATUS, "Status")):
        if needed not in columns:
            shown = ", ".join(header[:12]) or "none"
            raise ExportError(f"line 1: the export has no {label!r} column (columns: {shown})")
    out = []
    try:
        for row in reader:
            if not any(cell.strip() for cell in row):
                continue

            def cell(name: str, row=row) -> str:
                i = columns.get(name)
                return row[i].strip() if i is not None and i < len(row) else ""

            participant = cell(PARTICIPANT)
            if not participant:
                raise ExportError(f"line {reader.line_num}: no participant id")
            out.append(PanelRow(line=reader.line_num, participant=participant, status=cell(STATUS).upper(),
                                code=cell(CODE) if CODE in columns else None, submission=cell("submission id"),
                                started_at=cell("started at"), completed_at=cell("completed at"),
                                time_taken=cell("time taken")))
    except csv.Error as exc:
        raise ExportError(f"line {reader.line_num}: {exc}") from None
    return out


def reconcile(panel: Iterable[PanelRow], sessions: Iterable[Mapping[str, Any]]) -> Reconciliation:
    """Compare the panel's rows with PaceLab's sessions (``panel_pid``, ``session``, ``state``, ``code_given``,
    ``finished_at``, ``duration_s``; sessions without a panel id are not the panel's)."""
    rows = list(panel)
    ours = {}
    for s in sessions:
        if s.get("panel_pid"):
            ours.setdefault(str(s["panel_pid"]), s)
    result = Reconciliation(panel_rows=len(rows), sessions=len(ours),
                            has_codes=all(r.code is not None for r in rows))
    seen: set[str] = set()
    for r in rows:
        if r.participant in seen:
            result.duplicates.append(r.participant)
            continue
        seen.add(r.participant)
        here = ours.get(r.participant)
        entry = {"participant": r.participant, "panel_status": r.status, "panel_code": r.code or "",
                 "panel_line": r.line, "panel_submission": r.submission, "panel_completed_at": r.completed_at,
                 "panel_time_taken": r.time_taken}
        if here is None:
            result.mismatches["in_panel_not_here"].append(entry)
            continue
        entry.update(session=here.get("session"), state=here.get("state"), code_given=here.get("code_given") or "",
                     finished_at=here.get("finished_at"), duration_s=here.get("duration_s"))
        ok = True
        if r.status in SUBMITTED and here.get("state") != "completed":
            result.mismatches["here_not_completed"].append(entry)
            ok = False
        if r.code is not None and (r.code or r.status in SUBMITTED) and r.code != (here.get("code_given") or ""):
            result.mismatches["code_mismatch"].append(entry)
            ok = False
        result.matched += ok
    for pid, s in ours.items():
        if pid not in seen:
            result.mismatches["here_not_in_panel"].append({
                "participant": pid, "session": s.get("session"), "state": s.get("state"),
                "code_given": s.get("code_given") or "", "finished_at": s.get("finished_at"),
                "duration_s": s.get("duration_s")})
    return result
