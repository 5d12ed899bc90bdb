"""``scripts/test --fast`` runs the tests that need no service. Which ones those are is read from each test
(tests/support/lanes.py), so a test that needs the database can never land in the fast lane by a wrong mark: it is
left out, or, marked fast by hand, it stops the run; one that reaches the database without saying so fails."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from procs import ROOT

SUPPORT = ROOT / "tests" / "support"

CASES = '''
import pytest


@pytest.fixture
def stored(db):
    return 1


@pytest.fixture(autouse=True)
def _quiet():
    yield


def test_pure():
    assert 1 + 1 == 2


def test_uses_the_database(db):
    pass


def test_uses_the_database_through_a_fixture(stored):
    pass


@pytest.mark.django_db
def test_marked_for_the_database():
    pass


@pytest.mark.integration
def test_integration():
    pass


def test_needs_redis(redis_url):
    pass
'''

CONFTEST = '''
import pytest

from lanes import pytest_collection_modifyitems, pytest_configure  # noqa: F401


@pytest.fixture
def redis_url():
    return "redis://unused"
'''


def _pytest(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL", "PACELAB_REQUIRE_SERVICES")}
    env.update(PYTHONPATH=os.pathsep.join([str(SUPPORT), str(ROOT)]), PACELAB_VAR_DIR=str(tmp_path / "var"))
    (tmp_path / "conftest.py").write_text(CONFTEST)
    (tmp_path / "pytest.ini").write_text(
        "[pytest]\nDJANGO_SETTINGS_MODULE = pacelab.settings\nmarkers =\n    integration: x\n")
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", *args], cwd=tmp_path,
                          env=env, capture_output=True, text=True, timeout=180)


def test_only_the_tests_that_need_no_service_are_fast(tmp_path):
    (tmp_path / "test_cases.py").write_text(CASES)
    run = _pytest(tmp_path, "--collect-only", "-m", "fast")
    assert run.returncode == 0, run.stdout + run.stderr
    collected = [line for line in run.stdout.splitlines() if "::" in line]
    assert collected == ["test_cases.py::test_pure"], run.stdout
    assert "1/6 tests collected (5 deselected)" in run.stdout


def test_a_hand_made_fast_mark_on_a_database_test_stops_the_run(tmp_path):
    (tmp_path / "test_cases.py").write_text(
        "import pytest\n\n\n@pytest.mark.fast\ndef test_wrongly_fast(db):\n    pass\n")
    run = _pytest(tmp_path, "-m", "fast")
    assert run.returncode == 4, run.stdout + run.stderr  # a usage error: nothing ran
    assert "test_cases.py::test_wrongly_fast: marked fast but needs db" in run.stderr


def test_a_test_that_reaches_the_database_without_saying_so_fails_in_the_fast_lane(tmp_path):
    (tmp_path / "test_cases.py").write_text(
        "from django.contrib.auth.models import User\n\n\ndef test_sneaky():\n    User.objects.count()\n")
    run = _pytest(tmp_path, "-m", "fast")
    assert run.returncode == 1, run.stdout + run.stderr
    assert "1 failed" in run.stdout and "Database access not allowed" in run.stdout


def test_the_suites_database_tests_are_not_fast():
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL")}
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "--collect-only", "-m", "fast",
         "tests/pacelab/test_requeue.py", "tests/pacelab/test_jsonb.py", "tests/playback/test_commands.py"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=180)
    assert run.returncode == 0, run.stdout + run.stderr
    fast = [line for line in run.stdout.splitlines() if "::" in line]
    assert {line.split("::")[0] for line in fast} == {"tests/pacelab/test_jsonb.py", "tests/playback/test_commands.py"}
    # test_commands mixes both: its django_db tests (importing traces, load_demo) stay out
    assert "tests/playback/test_commands.py::test_stream_metrics_table_names_the_format" in fast
    assert not any("import_traces" in line or "load_demo" in line or "save_a_named" in line for line in fast), fast


def test_every_test_named_slow_exists():
    """A renamed test would silently drop off the slow list (and slow the lane down): the names must be found."""
    from lanes import ALL, SLOW_TESTS

    missing = []
    for module, names in SLOW_TESTS.items():
        source = (ROOT / module).read_text()
        missing += [f"{module}::{n}" for n in names if names != ALL and f"def {n}(" not in source]
    assert missing == []


def test_every_fixture_named_slow_exists_in_its_module():
    """The same for the heavy fixtures whose tests are slow: a renamed fixture would put its tests back in the lane."""
    from lanes import SLOW_FIXTURES

    missing = [f"{module}::{name}" for module, names in SLOW_FIXTURES.items() for name in names
               if f"def {name}(" not in (ROOT / module).read_text()]
    assert missing == []


def test_a_test_that_asks_for_a_slow_fixture_is_slow_and_the_others_of_its_module_stay_fast():
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL")}
    module = "tests/analysis/reporting/test_figures.py"
    run = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "--collect-only", "-m",
                          "fast", module], cwd=ROOT, env=env, capture_output=True, text=True, timeout=180)
    assert run.returncode == 0, run.stdout + run.stderr
    fast = {line.split("::")[1].split("[")[0] for line in run.stdout.splitlines() if "::" in line}
    assert "test_results_without_analyses_draw_nothing" in fast  # no analysis run behind it
    assert not fast & {"test_svgs_are_valid_xml_with_the_conditions_as_text",  # asks for `written`
                       "test_the_same_results_draw_the_same_svg"}  # asks for `results`
