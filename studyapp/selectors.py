"""Reads of the study layer: sessions by token, what the current step shows, counts."""

from __future__ import annotations

from typing import Any

from django.db.models import Count, QuerySet

from pacelab.tokens import token_shaped
from studyapp.journey import steps as journey
from studyapp.models import Session, Study, Trial


def study_by_slug(slug: str) -> Study | None:
    return Study.objects.filter(slug=slug).first()


def session_by_token(token: str) -> Session | None:
    """The session of a participant token; ``None`` for a forged or unknown one (no hint which)."""
    if not token_shaped(token):
        return None
    return Session.objects.select_related("study").filter(token=token).first()


def session_by_panel_id(study: Study, pid: str) -> Session | None:
    """The (non-preview) session of a panel id in a study, if any: at most one exists."""
    return Session.objects.select_related("study").filter(study=study, panel_pid=pid, preview=False).first()


def studies_for(user) -> QuerySet[Study]:
    """Studies a researcher may see: their own and those shared with them."""
    from django.db.models import Q

    return Study.objects.filter(Q(owner=user) | Q(members__user=user)).distinct()


def study_text(study: Study, key: str, language: str) -> str:
    return journey.localize((study.spec.get("texts") or {}).get(key, ""), language)


def step_view(session: Session) -> dict[str, Any]:
    """What the current step shows, localised: the shared description used by the page, step.json and bots."""
    study, lang = session.study, session.language
    steps = session.plan["steps"]
    step = steps[min(session.step, len(steps) - 1)]
    done, total = journey.progress(steps, session.step)
    view: dict[str, Any] = {"step": session.step, "kind": step["kind"], "state": session.state,
                            "language": lang, "progress": {"done": done, "total": total},
                            "title": journey.localize(study.spec.get("title", study.slug), lang)}
    kind = step["kind"]
    texts_for = {"consent": "consent", "environment": "environment", "instructions": "instructions",
                 "questionnaire": "questionnaire", "debrief": "debrief", "break": "break"}
    if kind in texts_for:
        view["text"] = study_text(study, texts_for[kind], lang)
    if kind == "message":
        view["text"] = study_text(study, step["text"], lang)
    if kind == "block_intro":
        block = next(b for b in study.spec["blocks"] if b["id"] == step["block"])
        view["text"] = journey.localize(block.get("intro", ""), lang)
        view["block_title"] = journey.localize(block.get("title", ""), lang)
    if kind == "questionnaire":
        view["items"] = journey.localize(study.spec.get("questionnaire") or [], lang)
    if kind in ("consent", "environment"):  # the consent page checks the device before anything is recorded
        view["limits"] = {k: v for k, v in (study.spec.get("limits") or {}).items()
                          if k in ("devices", "min_viewport", "min_refresh_hz")} if kind == "consent" else (
            study.spec.get("limits") or {})
    if kind == "trial":
        trial = Trial.objects.get(session=session, index=step["trial"])
        spec = trial.spec
        view["trial"] = {
            "index": trial.index, "type": spec["type"], "block": spec["block"], "practice": spec["practice"],
            "question": journey.localize(spec["question"], lang), "scale": journey.localize(spec["scale"], lang),
            "labels": journey.localize((spec["task"] or {}).get("labels") or {}, lang),
            "comment": (spec["task"] or {}).get("comment", "none"),
            "controls": (spec["task"] or {}).get("controls", "after_end"),
            "presentation": (spec["task"] or {}).get("presentation", "sequential"),
            "gap_ms": (spec["task"] or {}).get("gap_ms", 1000),
            "stimuli": [{"delivery": s["delivery"], "strategy": s["strategy"], "indicator": s["indicator"],
                         "language": s.get("language", "")} for s in spec["stimuli"]],
        }
    return view


def study_counts(study: Study) -> dict[str, int]:
    counts = dict(Session.objects.filter(study=study, preview=False).values_list("state").annotate(n=Count("id")))
    counts["declined"] = study.declines.count()
    return {state: counts.get(state, 0) for state in [*Session.State.values]} | {"declined": counts["declined"]}


def participant_slots(study: Study) -> dict[str, Any]:
    """How many more participants the study's quotas let in: ``left`` (``None``: no quota), the quotas, and the
    sessions that count against them (completed or in progress, as ``services.session_enter`` counts them)."""
    from studyapp.design import plan as design
    from studyapp.services import LIVE_STATES

    quotas = (study.spec.get("limits") or {}).get("quotas") or {}
    overall, group_quotas = quotas.get("overall"), quotas.get("groups") or {}
    rows = (Session.objects.filter(study=study, preview=False, state__in=[Session.State.COMPLETED, *LIVE_STATES])
            .values("group", "state").annotate(n=Count("id")).order_by())
    fill: dict[str, int] = {}
    completed = 0
    for r in rows:
        fill[r["group"]] = fill.get(r["group"], 0) + r["n"]
        completed += r["n"] if r["state"] == Session.State.COMPLETED else 0
    groups = [g.id for g in design.groups(study.spec)]
    limits = []
    if overall is not None:
        limits.append(max(0, int(overall) - sum(fill.values())))
    if groups and all(g in group_quotas for g in groups):  # every group capped: their sum caps the study
        limits.append(sum(max(0, int(group_quotas[g]) - fill.get(g, 0)) for g in groups))
    return {"left": min(limits) if limits else None, "overall": overall, "groups": dict(group_quotas),
            "counted": sum(fill.values()), "completed": completed, "in_progress": sum(fill.values()) - completed}
