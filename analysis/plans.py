"""Writes of the planner: requesting a plan for a study, computing it (in a task or inline) with its progress.

The simulation is ``analysis.stats.planning`` (pure); this module keeps the ``PlanRun`` row as the record, so the
dashboard shows a plan computed in the background (a Celery task in production, a thread in the embedded mode:
``pacelab.tasks.enqueue``, as analysis runs) or by ``manage.py plan_study``.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence

from django.db import transaction
from django.utils import timezone

from analysis.models import PlanRun
from analysis.stats import planning
from pacelab.tasks import enqueue
from studyapp.bots import observers as bot_models
from studyapp.models import Study

log = logging.getLogger("pacelab")
ACTIVE = (PlanRun.State.QUEUED, PlanRun.State.RUNNING)


def plan_request(*, study: Study, participants: Sequence[int] = planning.DEFAULT_PARTICIPANTS,
                 runs: int = planning.DEFAULT_RUNS, by=None) -> PlanRun:
    """The study's plan under way, or a new one enqueued on commit (default model)."""

    with transaction.atomic():
        Study.objects.select_for_update().filter(pk=study.pk).first()  # one request at a time per study
        active = PlanRun.objects.filter(study=study, state__in=ACTIVE).first()
        if active is not None:
            return active
        plan = PlanRun.objects.create(study=study, participants=sorted({int(n) for n in participants}), runs=runs,
                                      model=planning.DEFAULT_MODEL.to_dict(), requested_by=by)
        transaction.on_commit(lambda: enqueue("analysis.tasks.run_plan", plan.pk))
    return plan


def plan_execute(*, plan_id: int, population: bot_models.Population | None = None, processes: int | None = None,
                 echo: Callable[[int, int], None] | None = None, interval: float = 0.5) -> PlanRun:
    """Compute a queued plan (the task body, or the command's). A finished plan is returned as it is."""
    with transaction.atomic():
        plan = PlanRun.objects.select_for_update().select_related("study").get(pk=plan_id)
        if plan.state not in ACTIVE:
            return plan
        plan.state = PlanRun.State.RUNNING
        plan.save(update_fields=["state"])
    population = population or bot_models.Population.from_config(plan.model or planning.DEFAULT_MODEL.to_dict())
    written = [0.0]

    def progress(done: int, total: int) -> None:
        if echo is not None:
            echo(done, total)
        now = time.monotonic()
        if done == total or now - written[0] >= interval:
            written[0] = now
            PlanRun.objects.filter(pk=plan_id).update(done=done, total=total)

    try:
        result = planning.plan(plan.study.spec, population, participants=plan.participants, runs=plan.runs,
                               processes=processes, progress=progress)
    except Exception as exc:  # noqa: BLE001 - any failure is recorded on the plan, with its reason
        log.exception("plan run %s failed", plan_id)
        PlanRun.objects.filter(pk=plan_id).update(state=PlanRun.State.FAILED, error=str(exc) or type(exc).__name__,
                                                  finished_at=timezone.now())
        return PlanRun.objects.get(pk=plan_id)
    PlanRun.objects.filter(pk=plan_id).update(state=PlanRun.State.DONE, results=result.to_dict(),
                                              finished_at=timezone.now())
    return PlanRun.objects.get(pk=plan_id)


def plan_inline(*, study: Study, population: bot_models.Population, participants: Sequence[int], runs: int,
                processes: int | None = None, echo: Callable[[int, int], None] | None = None) -> PlanRun:
    """A plan computed in this process (``manage.py plan_study``), kept as the study's latest plan."""
    plan = PlanRun.objects.create(study=study, participants=sorted({int(n) for n in participants}), runs=runs,
                                  model=population.to_dict())
    return plan_execute(plan_id=plan.pk, population=population, processes=processes, echo=echo)


def latest_plan(study: Study) -> PlanRun | None:
    return PlanRun.objects.filter(study=study).first()
