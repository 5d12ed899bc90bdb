"""Shared fixtures: real services (PostgreSQL, Redis), and real processes (Daphne, Celery worker).

Integration tests talk to the services ``scripts/test`` starts. A missing service fails the test with a clear
message; it is never skipped (``PACELAB_REQUIRE_SERVICES`` is set by scripts/test, and CI runs scripts/test).
"""

from __future__ import annotations

import os
import sys
import uuid
from pathlib import Path

import pytest

# Playwright's sync API runs an event loop in the test thread; Django's async-safety check would then refuse the
# test database set-up. The check stays on in every server process the tests start (see ``service_env``).
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")

ROOT = Path(__file__).resolve().parent.parent
DATA = Path(__file__).resolve().parent / "data"
sys.path.insert(0, str(Path(__file__).resolve().parent / "support"))

from lanes import pytest_collection_modifyitems, pytest_configure  # noqa: E402,F401 - the fast lane's marks
from procs import free_port, start_celery_worker, start_daphne, stop  # noqa: E402


@pytest.fixture(autouse=True)
def _default_language():
    """Each test starts and ends in the default language: a request through LocaleMiddleware leaves its language
    active on the worker thread, which would otherwise leak into the next test in the same xdist worker."""
    yield
    if "django" in sys.modules:
        from django.utils import translation

        translation.deactivate()


@pytest.fixture
def data_dir() -> Path:
    return DATA


def _db_url() -> str:
    """A URL for the database the current test uses (pytest-django's test database)."""
    from django.db import connection

    s = connection.settings_dict
    if s["ENGINE"].endswith("sqlite3"):
        return f"sqlite:///{s['NAME']}"
    return f"postgres://{s['USER']}:{s['PASSWORD']}@{s['HOST'] or '127.0.0.1'}:{s['PORT'] or 5432}/{s['NAME']}"


@pytest.fixture
def require_postgres():
    from django.db import connection

    if connection.vendor != "postgresql":
        pytest.fail("this test needs PostgreSQL: run it through scripts/test (DATABASE_URL unset)")


@pytest.fixture
def redis_url() -> str:
    url = os.environ.get("REDIS_URL")
    if not url:
        pytest.fail("this test needs Redis: run it through scripts/test (REDIS_URL unset)")
    import redis

    try:
        redis.Redis.from_url(url).ping()
    except redis.RedisError as exc:
        pytest.fail(f"Redis at {url} is not reachable: {exc}")
    return url


@pytest.fixture
def service_env(redis_url, require_postgres, transactional_db) -> dict[str, str]:
    """Environment for a child process that shares this test's database and Redis (production mode)."""
    env = dict(os.environ)
    env.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)
    env.update(
        DATABASE_URL=_db_url(),
        REDIS_URL=redis_url,
        SECRET_KEY=os.environ.get("SECRET_KEY", "test-only"),
        DJANGO_SETTINGS_MODULE="pacelab.settings",
        SERVE_STATIC="1",  # pages under test load their scripts from the same server
        PYTHONUNBUFFERED="1",
    )
    return env


@pytest.fixture
def daphne_server(service_env, tmp_path):
    """A real Daphne process on a free port, serving this test's database; yields its base URL."""
    port = free_port()
    proc = start_daphne(port, service_env, tmp_path / "daphne.log")
    yield f"http://127.0.0.1:{port}"
    stop(proc)


@pytest.fixture
def celery_worker(service_env, settings, tmp_path):
    """A real Celery worker consuming a queue of its own (so parallel test workers never share tasks)."""
    queue = f"test-{uuid.uuid4().hex[:8]}"
    settings.PACELAB_TASK_QUEUE = queue
    proc = start_celery_worker(queue, service_env, tmp_path / "celery.log")
    yield queue
    stop(proc)
