"""Reads of the dashboard: a researcher's studies with their roles, and the live snapshot of one study.

The snapshot is what the live view shows; it is re-read from the database on every notification (the socket
only says "look again"), so it must stay cheap: aggregates in SQL, and the fidelity of each playback computed
once per (playback, number of paint batches) and kept in a small per-process cache.
"""

from __future__ import annotations

import statistics
from collections import OrderedDict
from typing import Any

from django.db.models import Count, Q
from django.utils import timezone

from dashboard.access import EDITOR, OWNER, VIEWER
from playback.core import fidelity
from playback.models.delivery import PaintReport
from studyapp.design import plan as design
from studyapp.models import Answer, Session, Study, StudyMember, Trial, TrialPlayback
from studyapp.selectors import studies_for, study_counts

STATE_KEYS = ("active", "completed", "timed_out", "returned", "screened_out", "withdrawn", "declined")
FIDELITY_CACHE_SIZE = 50_000
_fidelity_cache: OrderedDict[tuple[int, int, float], bool] = OrderedDict()


def studies_with_roles(user) -> list[dict[str, Any]]:
    """The user's own studies and those shared with them, newest first, each with role, state and counts."""
    studies = list(studies_for(user).select_related("owner"))
    member_roles = dict(StudyMember.objects.filter(user=user, study__in=studies).values_list("study_id", "role"))
    counts = _counts_by_study([s.pk for s in studies])
    out = []
    for study in studies:
        role = OWNER if study.owner_id == user.pk else member_roles.get(study.pk, VIEWER)
        out.append({"study": study, "role": role, "counts": counts.get(study.pk, {}),
                    "can_edit": role in (OWNER, EDITOR)})
    return out


def _counts_by_study(ids: list[int]) -> dict[int, dict[str, int]]:
    rows = (Session.objects.filter(study_id__in=ids, preview=False).values("study_id")
            .annotate(started=Count("id"), active=Count("id", filter=Q(state=Session.State.ACTIVE)),
                      completed=Count("id", filter=Q(state=Session.State.COMPLETED))))
    out = {r["study_id"]: {"started": r["started"], "active": r["active"], "completed": r["completed"]}
           for r in rows}
    for study_id, declined in (Study.objects.filter(pk__in=ids).annotate(n=Count("declines"))
                               .values_list("pk", "n")):
        entry = out.setdefault(study_id, {"started": 0, "active": 0, "completed": 0})
        entry["started"] += declined  # a decline was a session that was entered, then deleted
    return out


def fidelity_bound_ms(spec: dict) -> float:
    """The study's fidelity bound: its ``fidelity_violated`` exclusion rule's ``bound_ms``, else the default."""
    for rule in spec.get("exclusions") or []:
        if isinstance(rule, dict) and rule.get("rule") == "fidelity_violated" and rule.get("bound_ms"):
            return float(rule["bound_ms"])
    return fidelity.DEFAULT_BOUND_MS


def _flagged_playbacks(playback_ids: list[int], bound: float) -> set[int]:
    """Which of these playbacks painted later than ``bound`` (p95); new or grown paint logs are summarised."""
    batches = dict(PaintReport.objects.filter(playback_id__in=playback_ids).values("playback_id")
                   .annotate(n=Count("id")).values_list("playback_id", "n"))
    todo = [pid for pid, n in batches.items() if (pid, n, bound) not in _fidelity_cache]
    entries: dict[int, list] = {}
    for pid, batch in PaintReport.objects.filter(playback_id__in=todo).values_list("playback_id", "entries"):
        entries.setdefault(pid, []).extend(batch if isinstance(batch, list) else [])
    for pid in todo:
        _fidelity_cache[(pid, batches[pid], bound)] = fidelity.summarize(entries.get(pid, []), bound_ms=bound).flagged
    while len(_fidelity_cache) > FIDELITY_CACHE_SIZE:
        _fidelity_cache.popitem(last=False)
    return {pid for pid, n in batches.items() if _fidelity_cache.get((pid, n, bound))}


def _fidelity(study: Study) -> dict[str, Any]:
    """Answered trials whose answered showing has a paint log, and how many of them exceeded the bound."""
    bound = fidelity_bound_ms(study.spec)
    links = (TrialPlayback.objects.filter(trial__session__study=study, trial__session__preview=False,
                                          trial__status=Trial.Status.ANSWERED)
             .values_list("trial_id", "playback_id", "showing", "trial__plays"))
    by_trial: dict[int, list[int]] = {}
    for trial_id, playback_id, showing, plays in links:
        if showing == plays:  # the last showing is the one that was answered
            by_trial.setdefault(trial_id, []).append(playback_id)
    playback_ids = [p for ps in by_trial.values() for p in ps]
    flagged = _flagged_playbacks(playback_ids, bound)
    with_log = set(PaintReport.objects.filter(playback_id__in=playback_ids).values_list("playback_id", flat=True))
    checked = [t for t, ps in by_trial.items() if any(p in with_log for p in ps)]
    n_flagged = sum(1 for t in checked if any(p in flagged for p in by_trial[t]))
    return {"checked": len(checked), "flagged": n_flagged, "bound_ms": bound}


def _attention(study: Study) -> dict[str, Any]:
    answers = Answer.objects.filter(session__study=study, session__preview=False, trial__attention=True)
    answered = answers.count()
    failed = answers.filter(value__attention_passed=False).count()
    return {"answered": answered, "failed": failed, "rate": round(failed / answered, 4) if answered else None}


def _median_trial_s(study: Study) -> float | None:
    pairs = (Answer.objects.filter(session__study=study, session__preview=False, trial__isnull=False,
                                   trial__shown_at__isnull=False)
             .values_list("trial__shown_at", "created_at"))
    seconds = [(answered - shown).total_seconds() for shown, answered in pairs]
    return round(statistics.median(seconds), 2) if seconds else None


def _groups(study: Study) -> list[dict[str, Any]]:
    quotas = ((study.spec.get("limits") or {}).get("quotas") or {}).get("groups") or {}
    rows = {r["group"]: r for r in Session.objects.filter(study=study, preview=False).values("group").annotate(
        started=Count("id"), active=Count("id", filter=Q(state=Session.State.ACTIVE)),
        completed=Count("id", filter=Q(state=Session.State.COMPLETED)))}
    names = [g.id for g in design.groups(study.spec)]
    names += sorted(set(rows) - set(names))  # groups of an earlier version of the study
    return [{"group": g, "started": rows.get(g, {}).get("started", 0), "active": rows.get(g, {}).get("active", 0),
             "completed": rows.get(g, {}).get("completed", 0), "quota": quotas.get(g)} for g in names]


def _conditions(study: Study) -> list[dict[str, Any]]:
    rows = (Trial.objects.filter(session__study=study, session__preview=False, practice=False, attention=False)
            .values("block", "condition")
            .annotate(planned=Count("id"), answered=Count("id", filter=Q(status=Trial.Status.ANSWERED)))
            .order_by("block", "condition"))
    return [{"block": r["block"], "condition": r["condition"], "planned": r["planned"], "answered": r["answered"]}
            for r in rows]


def study_snapshot(study: Study) -> dict[str, Any]:
    """Everything the live view shows, read now (JSON-ready)."""
    study.refresh_from_db(fields=["state", "version", "title", "spec"])
    counts = study_counts(study)
    states = {k: counts.get(k, 0) for k in STATE_KEYS}
    quotas = (study.spec.get("limits") or {}).get("quotas") or {}
    return {
        "type": "snapshot",
        "at": timezone.now().isoformat(),
        "study": {"slug": study.slug, "state": study.state, "version": study.version},
        "counts": {"started": sum(states.values()), **states},
        "overall_quota": quotas.get("overall"),
        "groups": _groups(study),
        "conditions": _conditions(study),
        "attention": _attention(study),
        "fidelity": _fidelity(study),
        "median_trial_s": _median_trial_s(study),
    }


def completion_codes(spec: dict) -> list[dict[str, str]]:
    """The panel codes and return URLs of the study file, to paste into the panel."""
    recruitment = spec.get("recruitment") or {}
    out = []
    for kind in ("completion", "screen_out", "returned"):
        entry = recruitment.get(kind)
        if isinstance(entry, dict) and (entry.get("code") or entry.get("url")):
            out.append({"kind": kind, "code": str(entry.get("code", "")), "url": str(entry.get("url", ""))})
    return out


def panel_params(spec: dict) -> dict[str, str]:
    return (spec.get("recruitment") or {}).get("params") or {
        "participant": "PROLIFIC_PID", "study": "STUDY_ID", "session": "SESSION_ID"}
