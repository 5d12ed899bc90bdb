"""The planner page: a study's expected headline intervals and power per participant count, computed in the
background (``analysis.plans``: a Celery task, or a thread in the embedded mode) with its progress.

Thin shells over ``analysis.plans``. Starting a plan needs ``edit``; a viewer reads it. The page polls
``plan/status.json`` while a plan is computed and reloads itself when it is done.
"""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.views.decorators.cache import never_cache

from analysis import plans
from analysis.models import PlanRun
from analysis.stats import planning
from dashboard import access
from dashboard.views.studies import with_study

MAX_RUNS = 1000


def plan_status(plan: PlanRun | None) -> dict[str, Any]:
    if plan is None:
        return {"plan": None, "state": "", "done": 0, "total": 0, "percent": 0.0, "finished": True}
    return {"plan": plan.pk, "state": plan.state, "done": plan.done, "total": plan.total, "percent": plan.percent,
            "finished": plan.state not in plans.ACTIVE, "error": plan.error if plan.state == PlanRun.State.FAILED
            else ""}


def _rows(plan: PlanRun | None) -> dict[str, list]:
    """The plan's tables, grouped by participant count, with the sentence a researcher reads."""
    results = plan.results if plan is not None and plan.state == PlanRun.State.DONE else None
    if not results:
        return {"conditions": [], "pairs": []}
    pct = f"{100 * results['quantile']:g}"
    conditions = []
    for c in results["conditions"]:
        if c["plus_minus"] is None:
            sentence = _("with %(n)s participants the %(pct)s %% point at %(condition)s could not be fitted") % {
                "n": c["participants"], "pct": pct, "condition": c["condition"]}
        else:
            sentence = _("with %(n)s participants the %(pct)s %% point at %(condition)s is known to ±%(pm)s "
                         "%(unit)s") % {"n": c["participants"], "pct": pct, "condition": c["condition"],
                                        "pm": f"{c['plus_minus']:.3g}", "unit": c["unit"]}
        conditions.append(c | {"sentence": sentence})
    return {"conditions": conditions, "pairs": results["pairs"]}


@never_cache
@with_study("view")
def plan_page(request: HttpRequest, study) -> HttpResponse:
    plan = plans.latest_plan(study)
    return render(request, "dashboard/plan.html", {
        "study": study, "plan": plan, "status": plan_status(plan), "tables": _rows(plan),
        "can_run": access.can(study.role, "edit"), "runs_default": planning.DEFAULT_RUNS,
        "quick_runs": planning.QUICK_RUNS,
        "participants_default": ",".join(map(str, planning.DEFAULT_PARTICIPANTS)),
        "model": planning.DEFAULT_MODEL})


def _form(request: HttpRequest) -> tuple[list[int], int] | str:
    try:
        counts = sorted({int(p) for p in request.POST.get("participants", "").split(",") if p.strip()})
        runs = int(request.POST.get("runs") or planning.DEFAULT_RUNS)
    except ValueError:
        return _("Participants: a comma-separated list of whole numbers; runs: a whole number.")
    if not counts or any(n < 2 or n > 2000 for n in counts):
        return _("Participants: each count between 2 and 2000.")
    if not 1 <= runs <= MAX_RUNS:
        return _("Runs: between 1 and %(max)s.") % {"max": MAX_RUNS}
    return counts, runs


@with_study("edit", ("POST",))
def plan_start(request: HttpRequest, study) -> HttpResponse:
    form = _form(request)
    if isinstance(form, str):
        plan = plans.latest_plan(study)
        return render(request, "dashboard/plan.html", {
            "study": study, "plan": plan, "status": plan_status(plan), "tables": _rows(plan), "can_run": True,
            "form_error": form, "runs_default": planning.DEFAULT_RUNS, "quick_runs": planning.QUICK_RUNS,
            "participants_default": request.POST.get("participants", ""), "model": planning.DEFAULT_MODEL},
            status=400)
    counts, runs = form
    plans.plan_request(study=study, participants=counts, runs=runs, by=request.user)
    return redirect(reverse("dashboard:plan", kwargs={"slug": study.slug}))


@never_cache
@with_study("view")
def plan_status_json(request: HttpRequest, study) -> JsonResponse:
    return JsonResponse(plan_status(plans.latest_plan(study)))
