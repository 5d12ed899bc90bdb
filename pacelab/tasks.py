"""Enqueueing background work the same way in both modes, and recovering work whose enqueue was lost.

Production sends the task to Celery on the configured queue; the embedded mode (``CELERY_TASK_ALWAYS_EAGER``)
runs it on a daemon thread so a request or the event loop never waits for it. The job row is the record: if the
broker is down when a job is created, the enqueue is logged and dropped, and ``requeue_stale`` (celery beat,
every minute) sends every job still queued after a grace period again. Tasks are idempotent, so a job sent
twice runs once.
"""

from __future__ import annotations

import logging
import threading
from datetime import timedelta
from typing import Any

from celery import shared_task
from django.conf import settings
from django.utils import timezone

log = logging.getLogger("pacelab")
STALE_AFTER = timedelta(seconds=60)


def enqueue(task: Any, *args: Any) -> bool:
    """Send ``task(*args)``; ``False`` (logged) when the broker cannot take it now."""
    if settings.CELERY_TASK_ALWAYS_EAGER:
        threading.Thread(target=task.apply, args=(args,), daemon=True, name=f"task-{task.name}").start()
        return True
    try:
        task.apply_async(args=args, queue=settings.PACELAB_TASK_QUEUE, retry=False)
    except Exception as exc:  # noqa: BLE001 - kombu/redis errors vary; the job row stays queued and is retried
        log.warning("could not enqueue %s%r now (%s); requeue_stale will send it again", task.name, args, exc)
        return False
    return True


def requeue_stale(now=None, stale_after: timedelta = STALE_AFTER) -> int:
    """Enqueue again every analysis run that has stayed queued longer than ``stale_after``, and every one that was
    abandoned while running; returns how many."""
    from analysis.models import AnalysisRun
    from analysis.services import analysis_recover_lost
    from analysis.tasks import run_analysis

    now = now or timezone.now()
    cutoff = now - stale_after
    n = 0
    for pk in AnalysisRun.objects.filter(state=AnalysisRun.State.QUEUED, created_at__lt=cutoff).values_list(
            "pk", flat=True):
        n += enqueue(run_analysis, pk)
    # a running run whose worker died (silent heartbeat, AnalysisRun.worker_lost): the next attempt takes it over
    n += len(analysis_recover_lost(now))
    return n


@shared_task
def requeue_stale_jobs() -> int:
    return requeue_stale()


@shared_task
def recover_lost_analyses() -> int:
    """Every ``ANALYSIS_SWEEP_S`` (celery beat): analysis runs whose worker died go out again within a minute."""
    from analysis.services import analysis_recover_lost

    return len(analysis_recover_lost())
