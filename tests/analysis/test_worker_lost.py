"""A Celery worker hard-killed mid-analysis (issue 41, item 4): with celery beat running, the run is recovered
within about a minute (its heartbeat goes silent, the sweep sends it again, a restarted worker takes it over), the
dashboard says "worker lost, restarting" meanwhile, and the results are stored exactly once."""

import signal
import sys
import time
import uuid
from pathlib import Path

import pytest
from django.db import transaction

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "support"))

from procs import BIN, _spawn, start_celery_worker, stop  # noqa: E402
from test_analysis_task import _study, _wait  # noqa: E402

from analysis import messages, services  # noqa: E402
from analysis.models import AnalysisFile, AnalysisRun  # noqa: E402
from dashboard.views.results import run_status  # noqa: E402

pytestmark = [pytest.mark.integration]


def start_beat(env: dict, tmp_path) -> object:
    log = tmp_path / "beat.log"
    proc = _spawn([str(BIN / "celery"), "-A", "pacelab", "beat", "-l", "info",
                   "--schedule", str(tmp_path / "beat-schedule")], env, log)
    proc.log = log
    return proc


def test_a_killed_worker_is_recovered_within_a_minute_and_stores_once(service_env, settings, tmp_path):
    study = _study()
    queue = f"test-{uuid.uuid4().hex[:8]}"
    settings.PACELAB_TASK_QUEUE = queue
    settings.VAR_DIR = tmp_path / "var"
    env = service_env | {"PACELAB_TASK_QUEUE": queue, "PACELAB_VAR_DIR": str(settings.VAR_DIR)}
    beat = start_beat(env, tmp_path)
    doomed = start_celery_worker(queue, env | {"PACELAB_ANALYSIS_TEST_DELAY": "0.5"}, tmp_path / "doomed.log")
    restarted = None
    try:
        with transaction.atomic():
            run = services.analysis_request(study=study)
        _wait(run.pk, 60, until=lambda r: r.state == AnalysisRun.State.RUNNING and r.percent > 5)
        stop(doomed, signal.SIGKILL)
        t_kill = time.monotonic()
        # a supervisor starts the worker again at once (systemd's Restart=, scripts/serve)
        restarted = start_celery_worker(queue, env, tmp_path / "restarted.log")

        shown, recovered_s = set(), None
        deadline = t_kill + 90
        while time.monotonic() < deadline:
            row = AnalysisRun.objects.get(pk=run.pk)
            status = run_status(row)
            shown.add(messages.stage_label(status["stage"]))
            if row.attempts >= 2 and recovered_s is None:
                recovered_s = time.monotonic() - t_kill
            if row.finished:
                break
            time.sleep(0.25)
    finally:
        for proc in (doomed, restarted, beat):
            if proc is not None:
                stop(proc)

    assert recovered_s is not None and recovered_s < 60, f"recovered after {recovered_s}s"
    assert "Worker lost, restarting" in shown, shown
    run = AnalysisRun.objects.get(pk=run.pk)
    assert run.state == AnalysisRun.State.DONE, run.error
    assert run.attempts == 2 and AnalysisRun.objects.filter(study=study).count() == 1
    files = list(AnalysisFile.objects.filter(run=run).values_list("name", flat=True))
    assert len(files) == len(set(files)) and "report.html" in files
    on_disk = sorted(str(p.relative_to(services.run_dir(run))) for p in services.run_dir(run).rglob("*") if p.is_file())
    assert on_disk == sorted(files)
    assert not list(services.analysis_root().glob(f".{run.pk}-*"))
    print(f"\nworker killed mid-analysis: new attempt after {recovered_s:.1f}s; shown {sorted(shown)}; "
          f"{len(files)} files stored once")
