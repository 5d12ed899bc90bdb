"""Periodic study tasks (celery beat). Tasks call services."""

from celery import shared_task


@shared_task
def sweep_sessions() -> int:
    """Time out sessions past their study's limit (idempotent: a second run finds nothing to do)."""
    from studyapp.services import sessions_expire

    return sessions_expire()
