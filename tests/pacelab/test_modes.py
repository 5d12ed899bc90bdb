"""The two modes: production settings under scripts/test, and the embedded mode with no variables set."""

import os
import subprocess
import sys
import urllib.request

import pytest
from django.conf import settings
from procs import ROOT, free_port, start_daphne, stop

pytestmark = [pytest.mark.integration]


def test_the_suite_runs_in_production_mode_on_postgresql_and_redis(require_postgres, redis_url):
    assert settings.MODE == "production"
    assert settings.DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql"
    assert settings.CHANNEL_LAYERS["default"]["BACKEND"] == "channels_redis.core.RedisChannelLayer"
    assert settings.CELERY_TASK_ALWAYS_EAGER is False


def _embedded_env(tmp_path) -> dict[str, str]:
    dropped = ("DATABASE_URL", "REDIS_URL", "SECRET_KEY", "DJANGO_ALLOW_ASYNC_UNSAFE")
    env = {k: v for k, v in os.environ.items() if k not in dropped}
    env["PACELAB_VAR_DIR"] = str(tmp_path / "var")
    return env


def test_embedded_mode_uses_sqlite_and_the_in_memory_layer_without_any_variable(tmp_path):
    code = ("import django; django.setup(); from django.conf import settings as s; "
            "print(s.MODE, s.DATABASES['default']['ENGINE'], s.CHANNEL_LAYERS['default']['BACKEND'], "
            "s.CELERY_TASK_ALWAYS_EAGER)")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=_embedded_env(tmp_path) | {
        "DJANGO_SETTINGS_MODULE": "pacelab.settings"}, capture_output=True, text=True, check=True).stdout.split()
    assert out == ["embedded", "django.db.backends.sqlite3", "channels.layers.InMemoryChannelLayer", "True"]
    assert (tmp_path / "var" / "secret_key").exists()


def test_embedded_mode_migrates_and_serves_over_daphne(tmp_path):
    env = _embedded_env(tmp_path)
    subprocess.run([sys.executable, "manage.py", "migrate", "--noinput", "-v", "0"], cwd=ROOT, env=env, check=True)
    port = free_port()
    proc = start_daphne(port, env, tmp_path / "daphne.log")
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz") as r:
            assert b'"mode": "embedded"' in r.read()
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/static/css/base.css") as r:
            assert r.status == 200
    finally:
        stop(proc)


def test_production_mode_refuses_to_start_without_a_secret_key(tmp_path):
    env = _embedded_env(tmp_path) | {"DATABASE_URL": "postgres://x:y@127.0.0.1:1/z", "REDIS_URL": "redis://127.0.0.1:1/0"}
    res = subprocess.run([sys.executable, "manage.py", "check"], cwd=ROOT, env=env, capture_output=True, text=True)
    assert res.returncode != 0
    assert "SECRET_KEY must be set" in res.stderr
