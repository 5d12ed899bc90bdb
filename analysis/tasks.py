"""Celery tasks: take ids, call services."""

from celery import shared_task
from django.db import InterfaceError, OperationalError


@shared_task(acks_late=True, reject_on_worker_lost=True, autoretry_for=(OperationalError, InterfaceError),
             retry_backoff=5, retry_backoff_max=120, max_retries=8)
def run_analysis(run_id: int) -> str:
    """Run an analysis. Safe to redeliver: the run's state machine and lease store its results once.

    A lost database connection is retried (with backoff, for about ten minutes): the next attempt takes the run
    over. Without the retry the message would be acknowledged and the run left "running" with nobody on it."""
    from analysis.services import analysis_run

    return analysis_run(run_id=run_id, retry_db_errors=True).state


@shared_task(acks_late=True)
def run_plan(plan_id: int) -> str:
    """Compute a study's plan (``analysis.plans``); a plan already finished is left as it is."""
    from analysis.plans import plan_execute

    return plan_execute(plan_id=plan_id).state
