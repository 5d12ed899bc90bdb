"""A researcher's afternoon, end to end: log in, open a study that bots have completed, replay what a participant's
screen painted, run the analysis and watch its progress bar advance, read the figures and download the export.

Real Daphne (production mode: PostgreSQL, Redis channel layer), a real Celery worker consuming the runs, bots
over HTTP and the playback websocket, headless Chromium. Pages run under PaceLab's CSP, so waits poll with
``page.evaluate`` (pagewait.wait_js) instead of ``wait_for_function``.
"""

from __future__ import annotations

import csv
import io
import time
import zipfile

import pytest
from dashboard_study import N_BOTS, SLUG, completed_study, log_in_researcher, replay_a_trial, service_env  # noqa: F401 - fixtures
from pagewait import wait_js
from procs import start_celery_worker, stop

from studyapp.models import Session, Trial

pytestmark = [pytest.mark.browser, pytest.mark.integration, pytest.mark.timeout(600)]


@pytest.fixture
def worker(service_env, tmp_path):  # noqa: F811 - dashboard_study's service_env
    """A Celery worker on the test's queue, slowed a little per progress step so the bar is seen moving."""
    env = service_env | {"PACELAB_ANALYSIS_TEST_DELAY": "0.25"}
    proc = start_celery_worker(service_env["PACELAB_TASK_QUEUE"], env, tmp_path / "celery.log")
    yield proc
    stop(proc)


def test_a_researcher_replays_a_trial_runs_the_analysis_and_downloads_the_export(
        daphne_server, worker, completed_study, browser, screenshot_dir, tmp_path):  # noqa: F811 - a fixture
    study = completed_study
    page = browser.new_page(viewport={"width": 1400, "height": 1100}, accept_downloads=True)
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    log_in_researcher(page, daphne_server)

    # --- a participant, and the replay of one of their trials -------------------------------------------------
    replay_a_trial(page, daphne_server, study)
    page.screenshot(path=str(screenshot_dir / "dashboard-replay.png"), full_page=True)

    # --- the analysis, with its progress bar ---------------------------------------------------------------
    page.goto(f"{daphne_server}/dashboard/{SLUG}/")
    page.click("#link-analysis")
    page.wait_for_selector("#analysis-start")
    page.click("#analysis-start button[type=submit]")
    page.wait_for_selector("#analysis-progress")
    percents: set[float] = set()
    sources: set[str] = set()
    stage_texts: set[str] = set()
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        try:
            seen = page.evaluate("window.__analysis ? [window.__analysis.percents, window.__analysis.last] : null")
        except Exception:  # noqa: BLE001 - the page reloads itself when the run is done
            seen = None
        if seen:
            percents.update(seen[0])
            if seen[1]:
                sources.add(seen[1]["source"])
            try:
                stage_texts.add(page.locator("#analysis-stage").inner_text(timeout=500))
            except Exception:  # noqa: BLE001 - reloading
                pass
        if page.locator("#results").count():
            break
        page.wait_for_timeout(100)
    page.wait_for_selector("#results", timeout=10_000)
    assert len({p for p in percents if 0 < p < 100}) >= 2, percents  # the bar advanced while we watched
    assert "socket" in sources
    from analysis.messages import STAGE_LABELS

    labels = {str(v) for v in STAGE_LABELS.values()}
    assert stage_texts & (labels - {"Done"}), stage_texts  # live stages shown by their labels, not their keys
    assert not stage_texts & {k for k in STAGE_LABELS if k != "done"}, stage_texts
    assert page.locator("#analysis-state").inner_text() in ("Done", "完成")
    assert page.locator("#thresholds tbody tr").count() >= 1
    images = page.locator("#figures img")
    assert images.count() >= 1
    wait_js(page, "[...document.querySelectorAll('#figures img')].every((i) => i.complete && i.naturalWidth > 0)")
    page.screenshot(path=str(screenshot_dir / "dashboard-results.png"), full_page=True)

    # --- the export ------------------------------------------------------------------------------------------
    with page.expect_download() as info:
        page.click("#download-export")
    path = tmp_path / "export.zip"
    info.value.save_as(path)
    with zipfile.ZipFile(path) as zf:
        rows = list(csv.DictReader(io.StringIO(zf.read("trials.csv").decode())))
        participants = list(csv.DictReader(io.StringIO(zf.read("participants.csv").decode())))
    answered = Trial.objects.filter(session__study=study, status=Trial.Status.ANSWERED)
    assert len(rows) == answered.count() == N_BOTS * 6
    sessions = set(Session.objects.filter(study=study).values_list("pk", flat=True))
    assert {int(r["participant"]) for r in rows} == sessions
    assert len(participants) == N_BOTS
    assert errors == []
    page.close()
