"""Celery tasks: take ids, call services."""

from celery import shared_task


@shared_task(acks_late=True, reject_on_worker_lost=True)
def run_import_job(job_id: int) -> str:
    """Import the files of a job. Safe to redeliver: the job row's state machine makes it run once."""
    from playback.services import import_job_run

    return import_job_run(job_id=job_id).state
