"""A fresh state directory: every command that needs the database says to run `manage.py prepare` (no
traceback), commands that need none work, and `prepare` makes it ready, idempotently."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from procs import ROOT

DEMO = "studyapp/data/demo-study.yaml"


def _manage(env: dict[str, str], *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "manage.py", *args], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=300)


@pytest.fixture
def fresh_env(tmp_path) -> dict[str, str]:
    dropped = ("DATABASE_URL", "REDIS_URL", "SECRET_KEY", "DJANGO_ALLOW_ASYNC_UNSAFE", "CELERY_BROKER_URL")
    env = {k: v for k, v in os.environ.items() if k not in dropped}
    env["PACELAB_VAR_DIR"] = str(tmp_path / "state")
    return env


@pytest.mark.parametrize("command", [
    ["load_study", DEMO],
    ["run_bots", "demo-perceived-speed", "--n", "1"],
    ["analyze", "demo-perceived-speed"],
    ["export", "demo-perceived-speed"],
    ["copy_study", "demo-perceived-speed", "copy", "--owner", "researcher"],
])
def test_a_command_on_an_unprepared_database_says_to_run_prepare(fresh_env, command):
    done = _manage(fresh_env, *command)
    assert done.returncode == 1
    assert "Traceback" not in done.stderr
    assert "is not prepared" in done.stderr and "Run `manage.py prepare` first" in done.stderr, done.stderr
    assert done.stderr.startswith(f"{command[0]}: the SQLite database ")


def test_prepare_makes_a_fresh_state_directory_ready_and_can_run_again(fresh_env, tmp_path):
    assert _manage(fresh_env, "validate_study", DEMO).returncode == 0  # needs no database
    first = _manage(fresh_env, "prepare")
    assert first.returncode == 0, first.stderr
    lines = first.stdout.splitlines()
    assert lines[0] == "database ready (migrations applied)" and lines[1] == "username: researcher"
    again = _manage(fresh_env, "prepare")
    assert again.stdout == first.stdout  # same login, nothing changed
    loaded = _manage(fresh_env, "load_study", DEMO, "--open")
    assert loaded.returncode == 0, loaded.stderr
    assert "created study demo-perceived-speed (version 1, open)" in loaded.stdout


def test_other_errors_keep_their_own_message(fresh_env):
    assert _manage(fresh_env, "prepare").returncode == 0
    done = _manage(fresh_env, "load_study", "no-such-file.yaml")
    assert done.returncode == 1 and "prepare" not in done.stderr and "Traceback" not in done.stderr
