"""Celery tasks of the dashboard: take ids, call services."""

from celery import shared_task
from django.core.cache import cache


@shared_task(ignore_result=True)
def quality_refresh(study_id: int) -> int:
    """Fill a study's quality-report cache (idempotent: a report already up to date is not computed again)."""
    from dashboard.selectors import review as selectors_review
    from studyapp.models import Study

    study = Study.objects.filter(pk=study_id).first()
    try:
        return selectors_review.quality_refresh(study) if study else 0
    finally:
        cache.delete(lock_key(study_id))


def lock_key(study_id: int) -> str:
    return f"pacelab:quality-refresh:{study_id}"


def quality_refresh_soon(study_id: int) -> bool:
    """Enqueue ``quality_refresh`` unless one for this study is already waiting or running (10 minutes at most)."""
    from pacelab.tasks import enqueue

    if not cache.add(lock_key(study_id), 1, timeout=600):
        return False
    return enqueue(quality_refresh, study_id)
