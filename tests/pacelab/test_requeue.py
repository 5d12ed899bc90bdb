"""Jobs whose enqueue was lost (broker down) are sent again by the periodic requeue, and run once."""

from datetime import timedelta

import pytest
from django.utils import timezone
from study_builders import loaded_study

from analysis import services as analysis_services  # noqa: E402
from analysis.models import AnalysisRun  # noqa: E402
from pacelab import tasks  # noqa: E402

pytestmark = pytest.mark.django_db


@pytest.fixture
def study(settings, tmp_path):
    settings.VAR_DIR = tmp_path / "var"
    return loaded_study("rq")


def _queued(study, version: str, age: timedelta = timedelta(0), **kw) -> AnalysisRun:
    run = AnalysisRun.objects.create(study=study, data_version=version, **kw)
    AnalysisRun.objects.filter(pk=run.pk).update(created_at=timezone.now() - age)
    return run


def test_an_unreachable_broker_leaves_the_run_queued_and_the_enqueue_reports_it(study, settings, monkeypatch):
    settings.CELERY_TASK_ALWAYS_EAGER = False
    from analysis.tasks import run_analysis

    def down(*args, **kwargs):
        raise ConnectionError("broker down")

    monkeypatch.setattr(run_analysis, "apply_async", down)
    run = _queued(study, "v1")
    assert tasks.enqueue(run_analysis, run.pk) is False
    run.refresh_from_db()
    assert run.state == AnalysisRun.State.QUEUED


def test_requeue_sends_only_runs_queued_longer_than_the_grace_period(study, settings, monkeypatch):
    settings.CELERY_TASK_ALWAYS_EAGER = False
    from analysis.tasks import run_analysis

    sent = []
    monkeypatch.setattr(run_analysis, "apply_async", lambda args, queue, retry: sent.append(args))
    old = _queued(study, "v-old", timedelta(minutes=5))
    _queued(study, "v-fresh")  # fresh: its own enqueue may still be on its way
    _queued(study, "v-done", timedelta(minutes=5), state=AnalysisRun.State.DONE)
    assert analysis_services.analysis_requeue_stale() == 1
    assert sent == [(old.pk,)]
