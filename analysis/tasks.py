"""Celery tasks of the analysis app, its periodic ones included (celery beat, ``CELERY_BEAT_SCHEDULE``): take ids,
call services. Services name these tasks (``RUN_ANALYSIS``) instead of importing this module."""

from celery import shared_task
from django.db import InterfaceError, OperationalError

from analysis import plans, services


@shared_task(acks_late=True, reject_on_worker_lost=True, autoretry_for=(OperationalError, InterfaceError),
             retry_backoff=5, retry_backoff_max=120, max_retries=8)
def run_analysis(run_id: int) -> str:
    """Run an analysis. Safe to redeliver: the run's state machine and lease store its results once.

    A lost database connection is retried (with backoff, for about ten minutes): the next attempt takes the run
    over. Without the retry the message would be acknowledged and the run left "running" with nobody on it."""
    return services.analysis_run(run_id=run_id, retry_db_errors=True).state


@shared_task(acks_late=True)
def run_plan(plan_id: int) -> str:
    """Compute a study's plan (``analysis.plans``); a plan already finished is left as it is."""
    return plans.plan_execute(plan_id=plan_id).state


@shared_task
def requeue_stale_jobs() -> int:
    """Every minute (celery beat): runs whose enqueue was lost, and abandoned ones, go out again."""
    return services.analysis_requeue_stale()


@shared_task
def recover_lost_analyses() -> int:
    """Every ``ANALYSIS_SWEEP_S`` (celery beat): analysis runs whose worker died go out again within a minute."""
    return len(services.analysis_recover_lost())
