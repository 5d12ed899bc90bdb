"""Celery tasks: take ids, call services."""

from celery import shared_task


@shared_task(acks_late=True, reject_on_worker_lost=True)
def run_analysis(run_id: int) -> str:
    """Run an analysis. Safe to redeliver: the run's state machine and lease store its results once."""
    from analysis.services import analysis_run

    return analysis_run(run_id=run_id).state
