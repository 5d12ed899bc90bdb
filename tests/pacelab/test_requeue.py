"""Jobs whose enqueue was lost (broker down) are sent again by the periodic requeue, and run once."""

from datetime import timedelta

import pytest
from django.utils import timezone

from pacelab import tasks
from playback.models import TraceImportJob

pytestmark = pytest.mark.django_db


def test_an_unreachable_broker_leaves_the_job_queued_and_the_enqueue_reports_it(settings, monkeypatch):
    settings.CELERY_TASK_ALWAYS_EAGER = False
    from playback.tasks import run_import_job

    def down(*args, **kwargs):
        raise ConnectionError("broker down")

    monkeypatch.setattr(run_import_job, "apply_async", down)
    job = TraceImportJob.objects.create(paths=[], format="")
    assert tasks.enqueue(run_import_job, job.pk) is False
    job.refresh_from_db()
    assert job.state == TraceImportJob.State.QUEUED


def test_requeue_sends_only_jobs_queued_longer_than_the_grace_period(settings, monkeypatch):
    settings.CELERY_TASK_ALWAYS_EAGER = False
    from playback.tasks import run_import_job

    sent = []
    monkeypatch.setattr(run_import_job, "apply_async", lambda args, queue, retry: sent.append(args))
    old = TraceImportJob.objects.create(paths=[], format="")
    TraceImportJob.objects.filter(pk=old.pk).update(created_at=timezone.now() - timedelta(minutes=5))
    TraceImportJob.objects.create(paths=[], format="")  # fresh: its own enqueue may still be on its way
    done = TraceImportJob.objects.create(paths=[], format="", state=TraceImportJob.State.DONE)
    TraceImportJob.objects.filter(pk=done.pk).update(created_at=timezone.now() - timedelta(minutes=5))
    assert tasks.requeue_stale() == 1
    assert sent == [(old.pk,)]
