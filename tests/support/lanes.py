"""The fast lane: ``scripts/test --fast`` runs the tests that need no service, without provisioning anything.

A test is ``fast`` unless it asks for a service, and that is read from the test itself, so a new test is sorted
correctly without anyone marking it: a marker that says it needs services (``integration``, ``browser``,
``serial_services``, ``django_db``) or a fixture, used directly or through another fixture or an autouse one, that
reaches the database, Redis, a server process or the browser. A test that reaches the database without saying so
fails loudly in either lane (pytest-django refuses database access without ``django_db``), and the fast lane
unsets ``DATABASE_URL`` and ``REDIS_URL``, so nothing in it can quietly reach the shared services.

``fast`` is set here only: a test marked ``fast`` by hand that also asks for a service stops the run at collection.
"""

from __future__ import annotations

import pytest

FAST = "fast"
SERVICE_MARKERS = frozenset({"integration", "browser", "serial_services", "django_db"})
SERVICE_FIXTURES = frozenset({
    # pytest-django's database (any backend: the fast lane must not fall back to SQLite for a database test);
    # not django_db_blocker, which every test gets through pytest-django's autouse fixtures
    "db", "transactional_db", "django_db_setup", "django_db_reset_sequences",
    "django_db_serialized_rollback", "live_server", "admin_client", "admin_user", "django_user_model",
    # this project's services and server processes (tests/conftest.py)
    "redis_url", "require_postgres", "service_env", "daphne_server", "celery_worker",
    # headless Chromium (tests/browser/conftest.py)
    "browser", "page", "static_server",
})


def services_of(item: pytest.Item) -> list[str]:
    """What ``item`` needs beyond the virtualenv: its service markers and service fixtures (empty: it is fast)."""
    marks = sorted(m.name for m in item.iter_markers() if m.name in SERVICE_MARKERS)
    fixtures = sorted(SERVICE_FIXTURES.intersection(getattr(item, "fixturenames", ())))
    return marks + fixtures


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "fast: needs no service (set automatically by tests/support/lanes.py; scripts/test --fast)")


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    wrong = []
    for item in items:
        needs = services_of(item)
        if item.get_closest_marker(FAST) is not None and needs:
            wrong.append(f"{item.nodeid}: marked fast but needs {', '.join(needs)}")
        elif not needs:
            item.add_marker(FAST)
    if wrong:
        raise pytest.UsageError("tests marked fast by hand need services (leave the fast mark to "
                                "tests/support/lanes.py):\n  " + "\n  ".join(wrong))
