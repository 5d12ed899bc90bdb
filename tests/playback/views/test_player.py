"""The standalone player test page is a development tool: served in the embedded mode and with DEBUG, a 404 on a
production site unless PLAYER_TEST_PAGE asks for it."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]


def test_the_page_is_served_when_on(client, settings):
    settings.PLAYER_TEST_PAGE = True
    response = client.get("/streams/player-test/")
    assert response.status_code == 200
    assert b"testpage.js" in response.content


def test_the_page_is_a_404_when_off(client, settings):
    settings.PLAYER_TEST_PAGE = False
    assert client.get("/streams/player-test/").status_code == 404


@pytest.mark.parametrize(
    ("env", "served"),
    [
        ({}, True),  # embedded mode
        ({"DATABASE_URL": "postgres://u:p@127.0.0.1:1/x", "REDIS_URL": "redis://127.0.0.1:1/0"}, False),
        ({"DATABASE_URL": "postgres://u:p@127.0.0.1:1/x", "REDIS_URL": "redis://127.0.0.1:1/0", "DEBUG": "1"}, True),
        ({"DATABASE_URL": "postgres://u:p@127.0.0.1:1/x", "REDIS_URL": "redis://127.0.0.1:1/0",
          "PLAYER_TEST_PAGE": "1"}, True),
    ],
    ids=["embedded", "production", "production-debug", "production-asked-for"],
)
def test_the_default_follows_the_mode(env, served, tmp_path):
    base = {k: v for k, v in os.environ.items()
            if k not in ("DATABASE_URL", "REDIS_URL", "DEBUG", "PLAYER_TEST_PAGE")}
    base.update(env, SECRET_KEY="test-only", PACELAB_VAR_DIR=str(tmp_path), DJANGO_SETTINGS_MODULE="pacelab.settings")
    run = subprocess.run([sys.executable, "-c", "from django.conf import settings; print(settings.PLAYER_TEST_PAGE)"],
                         cwd=ROOT, env=base, capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == str(served)
