"""The study the dashboard's browser tests open: the researcher "rhea", a study that N_BOTS bots completed, and
the services they run on. Its fixtures are imported by the test modules that use them (test_dashboard_flow.py,
test_engines_pages.py); no conftest imports (they would clash with other folders' conftest modules).
"""

from __future__ import annotations

import json
import time
import uuid

import pytest
from studies import complete_with_bots, log_in, open_study
from study_builders import study as build

from dashboard.selectors import participants as selectors_participants

SLUG = "flow-study"
N_BOTS = 6
RESEARCHER = "rhea"
PASSWORD = "rhea-reads-results-7"


@pytest.fixture
def service_env(service_env, tmp_path):
    """Daphne and the worker share a VAR_DIR (the run's files) and a task queue of this test's own."""
    service_env["PACELAB_VAR_DIR"] = str(tmp_path / "var")
    service_env["PACELAB_TASK_QUEUE"] = f"test-flow-{uuid.uuid4().hex[:8]}"
    return service_env


@pytest.fixture
def completed_study(django_user_model, daphne_server):
    """The study SLUG, owned by the researcher, completed by N_BOTS bots."""
    researcher = django_user_model.objects.create_user(RESEARCHER, password=PASSWORD)
    study = open_study(build(id=SLUG), researcher)
    return complete_with_bots(study, daphne_server, N_BOTS)


def log_in_researcher(page, base: str) -> None:
    """The owner of the completed study logs in."""
    log_in(page, base, RESEARCHER, PASSWORD)


def _count(page, selector: str) -> int:
    """How many elements match, through ``evaluate`` (a Playwright page and the engines' pages both have it)."""
    return int(page.evaluate(f"document.querySelectorAll({json.dumps(selector)}).length"))


def replay_a_trial(page, base: str, study) -> None:
    """From the study's dashboard to the first participant's first trial, replayed to its end: the replay starts
    empty, grows over time and ends on exactly the text the participant's browser painted and was scheduled to,
    with one lateness point per painted frame (``selectors.participants.trial_replay``)."""
    page.goto(f"{base}/dashboard/{study.slug}/")
    page.click("#link-participants")
    page.wait_for_selector("#participants")
    assert _count(page, "#participants tbody tr") == N_BOTS
    page.click("#participants tbody tr a")
    page.wait_for_selector("#timeline")
    page.click("a.replay-link")
    page.wait_for_selector("#pane-painted .content", state="attached")
    trial_id = int(page.evaluate("JSON.parse(document.getElementById('replay-data').textContent).trial.id"))
    truth = selectors_participants.trial_replay(study, trial_id, 0)
    assert truth["painted"] and truth["painted_text"]
    assert page.evaluate("window.__replay.paintedText()") == ""  # nothing painted at time 0
    page.click("#replay-play")
    lengths = []
    deadline = time.monotonic() + truth["duration_ms"] / 1000 + 15
    while time.monotonic() < deadline and not page.evaluate("window.__replay.done"):
        lengths.append(page.evaluate("window.__replay.paintedText().length"))
        page.wait_for_timeout(50)
    assert page.evaluate("window.__replay.done") is True
    assert page.evaluate("window.__replay.paintedText()") == truth["painted_text"]
    assert page.evaluate("window.__replay.scheduledText()") == truth["scheduled_text"]
    assert len(set(lengths)) > 2 and lengths == sorted(lengths)  # it played: the text grew over time
    assert _count(page, "#late-plot svg circle") == len(truth["painted"])
