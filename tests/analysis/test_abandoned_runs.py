"""A running analysis whose process died with no redelivery (an inline run killed, the embedded server restarted,
the database lost mid-run) is recognised by its silent heartbeat and can be cancelled, rerun and resent."""

from datetime import timedelta

import pytest
from django.db import OperationalError
from django.utils import timezone
from study_builders import loaded_study

from analysis import (  # noqa: E402
    selectors,
    services,
    tasks,  # noqa: E402
)
from analysis.models import ABANDONED_AFTER, AnalysisRun  # noqa: E402
from analysis.progress import Reporter  # noqa: E402

pytestmark = pytest.mark.django_db


@pytest.fixture
def study(settings, tmp_path):
    settings.VAR_DIR = tmp_path / "var"
    return loaded_study("ab")


def _running(study, silent: timedelta) -> AnalysisRun:
    run = services.analysis_request(study=study, enqueue_task=False)
    services._start(run.pk, "a-dead-attempt")
    AnalysisRun.objects.filter(pk=run.pk).update(heartbeat_at=timezone.now() - silent)
    return AnalysisRun.objects.get(pk=run.pk)


def test_a_run_silent_longer_than_the_limit_is_abandoned_and_a_working_one_is_not(study):
    assert not _running(study, timedelta(seconds=30)).abandoned()
    run = AnalysisRun.objects.get(study=study)
    AnalysisRun.objects.filter(pk=run.pk).update(heartbeat_at=timezone.now() - ABANDONED_AFTER - timedelta(1))
    assert AnalysisRun.objects.get(pk=run.pk).abandoned()


def test_a_new_request_ends_an_abandoned_run_and_starts_afresh_but_leaves_a_working_one(study):
    working = _running(study, timedelta(seconds=30))
    assert services.analysis_request(study=study, enqueue_task=False, force=True).pk == working.pk
    AnalysisRun.objects.filter(pk=working.pk).update(heartbeat_at=timezone.now() - ABANDONED_AFTER * 2)
    fresh = services.analysis_request(study=study, enqueue_task=False)
    old = AnalysisRun.objects.get(pk=working.pk)
    assert fresh.pk != old.pk and fresh.state == AnalysisRun.State.QUEUED
    assert old.state == AnalysisRun.State.FAILED and old.error.startswith("abandoned:")


def test_cancelling_an_abandoned_run_ends_it_at_once(study):
    run = _running(study, ABANDONED_AFTER * 2)
    done = services.analysis_cancel(run=run)
    assert done.state == AnalysisRun.State.CANCELLED and done.finished_at is not None
    live = services.analysis_request(study=study, enqueue_task=False)
    services._start(live.pk, "alive")
    assert services.analysis_cancel(run=live).state == AnalysisRun.State.RUNNING  # read at its next step


def test_the_periodic_requeue_resends_an_abandoned_run(study, settings, monkeypatch):
    settings.CELERY_TASK_ALWAYS_EAGER = False
    from analysis.tasks import run_analysis

    sent = []
    monkeypatch.setattr(run_analysis, "apply_async", lambda args, queue, retry: sent.append(args))
    run = _running(study, timedelta(seconds=5))  # beating: left alone
    assert services.analysis_requeue_stale() == 0
    AnalysisRun.objects.filter(pk=run.pk).update(heartbeat_at=timezone.now() - ABANDONED_AFTER * 2)
    assert services.analysis_requeue_stale() == 1 and sent == [(run.pk,)]
    # sent once: the next attempt has ANALYSIS_LOST_AFTER_S to take it over
    assert services.analysis_requeue_stale() == 0


def test_a_run_silent_past_the_lost_limit_is_shown_as_worker_lost_and_sent_again(study, settings, monkeypatch):
    settings.CELERY_TASK_ALWAYS_EAGER = False
    from analysis.tasks import run_analysis
    from dashboard.views.results import run_status

    sent = []
    monkeypatch.setattr(run_analysis, "apply_async", lambda args, queue, retry: sent.append(args))
    run = _running(study, timedelta(seconds=settings.ANALYSIS_LOST_AFTER_S + 1))
    assert run_status(run)["stage"] == "lost"
    assert tasks.recover_lost_analyses() == 1 and sent == [(run.pk,)]
    run.refresh_from_db()
    assert run.stage == "lost" and run_status(run)["stage"] == "lost" and not run.abandoned()


def test_the_reporter_beats_while_it_holds_the_lease(study):
    run = _running(study, ABANDONED_AFTER * 2)
    reporter = Reporter(run.pk, "a-dead-attempt", interval=0.0)
    assert reporter.cancelled() is False
    assert not AnalysisRun.objects.get(pk=run.pk).abandoned()
    other = Reporter(run.pk, "someone-else", interval=0.0)
    assert other.cancelled() is True  # not its run: it stops, and its beat does not count


def test_a_lost_database_is_retried_by_the_task_and_recorded_inline(study, monkeypatch):
    def down(_study):
        raise OperationalError("server closed the connection unexpectedly")

    monkeypatch.setattr(selectors, "study_frame", down)
    run = services.analysis_request(study=study, enqueue_task=False)
    with pytest.raises(OperationalError):
        services.analysis_run(run_id=run.pk, retry_db_errors=True)
    assert AnalysisRun.objects.get(pk=run.pk).state == AnalysisRun.State.RUNNING  # the retry takes it over
    again = services.analysis_run(run_id=run.pk)  # inline: no retry to come, so the failure is recorded
    assert again.state == AnalysisRun.State.FAILED and "database connection was lost" in again.error
    assert again.attempts == 2
