"""Analysis runs on a real Celery worker against real Redis and PostgreSQL, including a worker killed mid-run."""

import math
import re
import signal
import sys
import time
import uuid
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.db import transaction

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "support"))

from journey_driver import answer_for  # noqa: E402
from procs import start_celery_worker, stop  # noqa: E402
from study_builders import study as study_doc  # noqa: E402

from analysis import services, snapshot  # noqa: E402
from analysis.models import AnalysisFile, AnalysisRun  # noqa: E402
from studyapp import selectors as study_selectors  # noqa: E402
from studyapp import services as study_services  # noqa: E402
from studyapp.models import Study, Trial  # noqa: E402

pytestmark = [pytest.mark.integration]


def _answer(session, threshold: float) -> None:
    """Drive one step; acceptability: yes when the trial's rate is above the participant's threshold."""
    session.refresh_from_db()
    view = study_selectors.step_view(session)
    payload = answer_for(view)
    if view["kind"] == "trial":
        trial = Trial.objects.get(session=session, index=view["trial"]["index"])
        study_services.trial_show(session=session, trial=trial)
        rate = float(trial.condition.split("rate=")[1].split(",")[0])
        payload = payload | {"response": "yes" if rate > threshold else "no"}
    study_services.session_submit(session_token=session.token, client_id=uuid.uuid4().hex, step=session.step,
                                  payload=payload)


def _study(n: int = 4) -> Study:
    owner = get_user_model().objects.create_user("researcher", password="pw-not-used-123")
    doc = study_doc(id=f"task-{uuid.uuid4().hex[:6]}")
    study, _ = study_services.study_load(doc=doc, owner=owner)
    study_services.study_set_state(study=study, state=Study.State.OPEN)
    for i in range(n):
        session, _ = study_services.session_enter(study=study, panel={"participant": f"p{i}"})
        for _ in range(200):
            session.refresh_from_db()
            if session.state != session.State.ACTIVE:
                break
            _answer(session, threshold=15 + 15 * i)
    return study


def _wait(run_id: int, timeout: float = 120.0, until=lambda r: r.finished) -> AnalysisRun:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        run = AnalysisRun.objects.get(pk=run_id)
        if until(run):
            return run
        time.sleep(0.2)
    raise AssertionError(f"run {run_id} is {run.state} ({run.stage} {run.percent} %) after {timeout}s")


@pytest.fixture
def var_dir(service_env, settings, tmp_path):
    """A VAR_DIR of the test's own, shared with the worker (requested before ``celery_worker``)."""
    settings.VAR_DIR = tmp_path / "var"
    service_env["PACELAB_VAR_DIR"] = str(settings.VAR_DIR)
    return settings.VAR_DIR


def test_a_worker_runs_the_analysis_once_and_an_unchanged_study_reuses_it(var_dir, celery_worker):
    study = _study()
    with transaction.atomic():
        run = services.analysis_request(study=study)
    assert run.state == AnalysisRun.State.QUEUED
    run = _wait(run.pk)
    assert run.state == AnalysisRun.State.DONE, run.error
    fit = run.results["psychometric"][0]["pooled"]
    assert 15 <= fit["threshold"] <= 80 and fit["n_trials"] == 4 * 6
    assert run.attempts == 1 and run.percent == 100.0
    assert services.analysis_request(study=study).pk == run.pk  # same data: the stored run
    names = set(AnalysisFile.objects.filter(run=run).values_list("name", flat=True))
    assert {"report.html", "results.json", "methods.txt"} <= names
    assert any(n.endswith(".pdf") for n in names)
    assert (var_dir / "analysis" / str(run.pk) / "report.html").read_text().count("<svg") >= 1


def test_a_worker_killed_mid_run_leaves_the_task_to_a_new_worker_which_stores_once(service_env, settings, tmp_path):
    study = _study()
    queue = f"test-{uuid.uuid4().hex[:8]}"
    settings.PACELAB_TASK_QUEUE = queue
    var = tmp_path / "var"
    env = service_env | {"CELERY_VISIBILITY_TIMEOUT": "5", "PACELAB_VAR_DIR": str(var)}
    settings.VAR_DIR = var
    slow = start_celery_worker(queue, env | {"PACELAB_ANALYSIS_TEST_DELAY": "0.5"}, tmp_path / "slow.log")
    try:
        with transaction.atomic():
            run = services.analysis_request(study=study)
        _wait(run.pk, 60, until=lambda r: r.state == AnalysisRun.State.RUNNING and r.stage == "psychometric")
    finally:
        stop(slow, signal.SIGKILL)
    killed = AnalysisRun.objects.get(pk=run.pk)
    assert killed.state == AnalysisRun.State.RUNNING and killed.attempts == 1
    fresh = start_celery_worker(queue, env, tmp_path / "fresh.log")
    try:
        run = _wait(run.pk, 120)
    finally:
        stop(fresh)
    assert run.state == AnalysisRun.State.DONE, run.error
    assert run.attempts == 2
    assert AnalysisRun.objects.filter(study=study).count() == 1
    files = list(AnalysisFile.objects.filter(run=run).values_list("name", flat=True))
    assert len(files) == len(set(files)) and "report.html" in files
    on_disk = sorted(str(p.relative_to(services.run_dir(run))) for p in services.run_dir(run).rglob("*") if p.is_file())
    assert on_disk == sorted(files)
    assert not list(services.analysis_root().glob(f".{run.pk}-*"))  # no staging directory left behind
    assert math.isfinite(run.results["psychometric"][0]["pooled"]["threshold"])


def test_cancelling_a_running_analysis_stops_it_at_its_next_step(service_env, settings, tmp_path):
    study = _study(3)
    queue = f"test-{uuid.uuid4().hex[:8]}"
    settings.PACELAB_TASK_QUEUE = queue
    settings.VAR_DIR = tmp_path / "var"
    env = service_env | {"PACELAB_ANALYSIS_TEST_DELAY": "0.3", "PACELAB_VAR_DIR": str(settings.VAR_DIR)}
    worker = start_celery_worker(queue, env, tmp_path / "worker.log")
    try:
        with transaction.atomic():
            run = services.analysis_request(study=study)
        run = _wait(run.pk, 60, until=lambda r: r.state == AnalysisRun.State.RUNNING)
        services.analysis_cancel(run=run)
        run = _wait(run.pk, 60)
    finally:
        stop(worker)
    assert run.state == AnalysisRun.State.CANCELLED
    assert run.results is None and not AnalysisFile.objects.filter(run=run).exists()
    assert not services.run_dir(run).exists()
    # a new request for the same data starts a new run rather than returning the cancelled one
    assert services.analysis_request(study=study, enqueue_task=False).pk != run.pk


def test_manage_analyze_inline_prints_progress_and_the_report_path_then_reuses_the_run(db, settings, tmp_path):
    from io import StringIO

    from django.core.management import call_command

    settings.VAR_DIR = tmp_path / "var"
    study = _study(3)
    out = StringIO()
    call_command("analyze", study.slug, "--inline", stdout=out)
    text = out.getvalue()
    assert "psychometric" in text and "fidelity" in text  # the progress bar's stages
    path = Path(re.search(r"report: (\S+)", text).group(1))
    assert path.is_file() and path.parent.parent == settings.VAR_DIR / "analysis"
    assert "<svg" in path.read_text()
    again = StringIO()
    call_command("analyze", study.slug, "--inline", stdout=again)
    assert "did not change" in again.getvalue() and str(path) in again.getvalue()
    assert AnalysisRun.objects.filter(study=study).count() == 1


def test_a_run_is_labelled_with_the_data_it_read_not_the_data_when_it_was_asked_for(db, settings, tmp_path):
    settings.VAR_DIR = tmp_path / "var"
    study = _study(2)
    run = services.analysis_request(study=study, enqueue_task=False)
    asked_for = run.data_version
    session, _ = study_services.session_enter(study=study, panel={"participant": "late"})  # arrives while it waits
    _answer(session, threshold=30)
    assert snapshot.data_version(study) != asked_for
    run = services.analysis_run(run_id=run.pk)
    assert run.state == AnalysisRun.State.DONE, run.error
    assert run.data_version == snapshot.data_version(study)
    assert run.results["exclusions"]["participants_total"] == 3  # the late one is read (if only to be excluded)
    assert run.data_version[:12] in (services.run_dir(run) / "report.html").read_text()
    assert services.analysis_request(study=study).pk == run.pk  # the same data: no second analysis


def test_a_waiting_run_steps_aside_for_one_already_analysing_its_newer_data(db, settings, tmp_path):
    settings.VAR_DIR = tmp_path / "var"
    study = _study(2)
    old = services.analysis_request(study=study, enqueue_task=False)
    session, _ = study_services.session_enter(study=study, panel={"participant": "late"})
    _answer(session, threshold=30)
    newer = services.analysis_request(study=study, enqueue_task=False)
    assert newer.pk != old.pk
    old = services.analysis_run(run_id=old.pk)
    assert old.state == AnalysisRun.State.CANCELLED and f"run {newer.pk}" in old.error


def test_a_waiting_run_steps_aside_when_its_newer_data_were_already_analysed(db, settings, tmp_path):
    settings.VAR_DIR = tmp_path / "var"
    study = _study(2)
    old = services.analysis_request(study=study, enqueue_task=False)  # its message is delivered late
    session, _ = study_services.session_enter(study=study, panel={"participant": "late"})
    _answer(session, threshold=30)
    newer = services.analysis_run(run_id=services.analysis_request(study=study, enqueue_task=False).pk)
    assert newer.state == AnalysisRun.State.DONE, newer.error
    old = services.analysis_run(run_id=old.pk)
    assert old.state == AnalysisRun.State.CANCELLED and f"run {newer.pk}" in old.error
    assert AnalysisRun.objects.filter(study=study, state=AnalysisRun.State.DONE).count() == 1


def test_sqlites_read_is_repeated_when_answers_arrive_during_it_and_labelled_with_what_was_read(db):
    from analysis.selectors import study_frame

    study = _study(2)
    calls = []

    def frame_while_answers_arrive(s):
        calls.append(1)
        if len(calls) == 1:  # an answer lands between the version and the frames of the first read
            session, _ = study_services.session_enter(study=s, panel={"participant": f"late{len(calls)}"})
            _answer(session, threshold=30)
        return study_frame(s)

    _trials, participants, version = snapshot._read_optimistic(study, frame_while_answers_arrive)
    assert len(calls) == 2 and version == snapshot.data_version(study)
    assert len(participants) == 3  # the late one is in what was read
