"""Reads for looking at one participant: the study's sessions, a session's timeline, a trial's replay.

Every function takes the study the view got from ``access.study_for`` and looks rows up *within* it, so an id
from another study answers ``None`` (a 404), exactly like an id that does not exist. Preview sessions are not
participants and are never shown.
"""

from __future__ import annotations

from typing import Any

from django.db.models import Count, Q

from dashboard.core import replay
from dashboard.selectors.review import code_given
from dashboard.selectors.studies import fidelity_bound_ms
from playback.core import fidelity
from playback.models.delivery import PaintReport
from studyapp.models import Answer, PageVisit, Session, Study, Trial, TrialPlayback


def parse_id(value: Any) -> int | None:
    try:
        out = int(str(value))
    except (TypeError, ValueError):
        return None
    return out if out > 0 else None


def sessions(study: Study) -> list[dict[str, Any]]:
    """Every participant of the study, newest first, with trials answered and planned, and what the panel's list
    shows of them: the completion code given, the submission time (``finished_at``) and the duration."""
    rows = (Session.objects.filter(study=study, preview=False).order_by("-started_at", "-id")
            .annotate(planned=Count("trials"),
                      answered=Count("trials", filter=Q(trials__status=Trial.Status.ANSWERED))))
    return [{"id": s.pk, "panel_pid": s.panel_pid or "", "state": s.state, "state_label": s.get_state_display(),
             "group": s.group, "language": s.language, "started_at": s.started_at, "finished_at": s.finished_at,
             "planned": s.planned, "answered": s.answered, "flags": s.flags, "excluded": s.excluded,
             "code_given": code_given(study.spec, s.state),
             "duration_s": round((s.finished_at - s.started_at).total_seconds()) if s.finished_at else None,
             "duration_min": round((s.finished_at - s.started_at).total_seconds() / 60, 1) if s.finished_at else None}
            for s in rows]


def session_of(study: Study, session_id: Any) -> Session | None:
    pk = parse_id(session_id)
    return Session.objects.filter(pk=pk, study=study, preview=False).first() if pk else None


def _entries(playback_ids: list[int]) -> dict[int, list[dict]]:
    out: dict[int, list[dict]] = {}
    for pid, batch in (PaintReport.objects.filter(playback_id__in=playback_ids).order_by("playback_id", "batch")
                       .values_list("playback_id", "entries")):
        out.setdefault(pid, []).extend(batch if isinstance(batch, list) else [])
    return out


def timeline(study: Study, session: Session) -> list[dict[str, Any]]:
    """Each step of the session's plan: time spent (page visits), the answer, and for trials what was shown."""
    steps = session.plan.get("steps") or []
    visits: dict[int, list[PageVisit]] = {}
    for v in PageVisit.objects.filter(session=session).order_by("entered_at", "id"):
        visits.setdefault(v.step, []).append(v)
    answers = {a.step: a for a in Answer.objects.filter(session=session)}
    trials = {t.step: t for t in Trial.objects.filter(session=session)}
    links = list(TrialPlayback.objects.filter(trial__session=session).order_by("trial_id", "showing", "position"))
    bound = fidelity_bound_ms(study.spec)
    entries = _entries([link.playback_id for link in links])
    shown: dict[int, list[dict[str, Any]]] = {}
    for link in links:
        trial = next((t for t in trials.values() if t.pk == link.trial_id), None)
        if trial is None or link.showing != trial.plays:
            continue  # an interrupted showing: the answered one is the last
        log = entries.get(link.playback_id, [])
        summary = fidelity.summarize(log, bound_ms=bound).as_dict() if log else None
        shown.setdefault(link.trial_id, []).append({"position": link.position, "playback": link.playback_id,
                                                    "logged": bool(log), "fidelity": summary})
    rows = []
    for i, step in enumerate(steps):
        seen = visits.get(i, [])
        seconds = sum((v.left_at - v.entered_at).total_seconds() for v in seen if v.left_at)
        answer = answers.get(i)
        trial = trials.get(i) if step.get("kind") == "trial" else None
        rows.append({
            "step": i, "kind": step.get("kind", ""), "block": step.get("block", ""),
            "reached": i <= session.step, "current": i == session.step and session.state == Session.State.ACTIVE,
            "entered_at": seen[0].entered_at if seen else None, "left_at": seen[-1].left_at if seen else None,
            "visits": len(seen), "seconds": round(seconds, 1) if seen else None,
            "answer": answer.value if answer else None, "response_ms": answer.response_ms if answer else None,
            "comment": answer.comment if answer else "",
            "trial": None if trial is None else {
                "id": trial.pk, "index": trial.index, "condition": trial.condition, "type": trial.kind,
                "practice": trial.practice, "attention": trial.attention, "status": trial.status,
                "plays": trial.plays, "interruptions": len(trial.interruptions or []),
                "shown": shown.get(trial.pk, [])},
        })
    return rows


def trial_replay(study: Study, trial_id: Any, position: Any = 0) -> dict[str, Any] | None:
    """The replay of one stream of a trial's last showing (the answered one), or ``None`` if there is none."""
    pk = parse_id(trial_id)
    pos = int(str(position)) if str(position).isdigit() else None
    if pk is None or pos is None:
        return None
    trial = (Trial.objects.filter(pk=pk, session__study=study, session__preview=False)
             .select_related("session").first())
    if trial is None:
        return None
    link = (TrialPlayback.objects.filter(trial=trial, showing=trial.plays, position=pos)
            .select_related("playback").first())
    if link is None:
        return None
    playback = link.playback
    data = replay.build(playback.stream, _entries([playback.pk]).get(playback.pk, []),
                        bound_ms=fidelity_bound_ms(study.spec))
    positions = list(TrialPlayback.objects.filter(trial=trial, showing=trial.plays).order_by("position")
                     .values_list("position", flat=True))
    return {"trial": {"id": trial.pk, "index": trial.index, "condition": trial.condition, "type": trial.kind,
                      "block": trial.block, "status": trial.status, "plays": trial.plays},
            "session": trial.session.pk, "position": link.position, "positions": positions,
            "playback": {"id": playback.pk, "mode": playback.mode,
                         "strategy": (playback.config or {}).get("strategy", ""),
                         "indicator": (playback.config or {}).get("indicator", "")},
            **data}
