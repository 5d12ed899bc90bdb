"""The study the dashboard's browser tests open: the researcher "rhea", a study that N_BOTS bots completed, and
the services they run on. Its fixtures are imported by the test modules that use them (test_dashboard_flow.py,
test_engines_pages.py); no conftest imports (they would clash with other folders' conftest modules).
"""

from __future__ import annotations

import uuid

import pytest
from studies import complete_with_bots, log_in, open_study
from study_builders import study as build

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
