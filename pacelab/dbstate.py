"""Whether the database is ready for the management commands, and what to run when it is not.

A fresh state directory has an empty SQLite file (or a PostgreSQL database without tables): a command that
reads a table then fails deep inside the ORM with ``no such table: auth_user``. ``manage.py`` runs every command
through ``run_command``, which turns such a failure into one line saying what to run (``manage.py prepare``, or
``manage.py migrate`` when only newer migrations are missing, or how to reach a database that does not answer).
It looks at the database only after a command failed, so commands that need no database (``validate_study``)
run on an unprepared one, and commands that succeed pay nothing.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable, Sequence

PREPARE = "manage.py prepare"
# a table or column the code expects but the database lacks (SQLite; PostgreSQL)
_MISSING = re.compile(r"no such (table|column)|relation \S+ does not exist|column \S+ does not exist", re.I)
# a database that cannot be reached or opened
_UNREACHABLE = re.compile(r"could not connect|connection refused|connection to server|database \S+ does not exist|"
                          r"password authentication failed|unable to open database", re.I)


def _where() -> str:
    from django.db import connection

    s = connection.settings_dict
    if s["ENGINE"].endswith("sqlite3"):
        return f"the SQLite database {s['NAME']}"
    return f"the database {s['NAME']!r} on {s.get('HOST') or 'localhost'}:{s.get('PORT') or 5432}"


def unapplied_migrations() -> list[str] | None:
    """The migrations not yet applied (``app.name``), or ``None`` when the database cannot be asked."""
    from django.db import DatabaseError, connection
    from django.db.migrations.executor import MigrationExecutor

    try:
        executor = MigrationExecutor(connection)
        plan = executor.migration_plan(executor.loader.graph.leaf_nodes())
    except DatabaseError:
        return None
    return [f"{m.app_label}.{m.name}" for m, _ in plan]


def explain(exc: BaseException) -> str | None:
    """What to run instead, for a database error caused by an unprepared or unreachable database; else None."""
    from django.db import InterfaceError, OperationalError, ProgrammingError

    if not isinstance(exc, OperationalError | ProgrammingError | InterfaceError):
        return None
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    if _MISSING.search(text):
        pending = unapplied_migrations()
        if pending is None:
            return None
        from django.db import connection

        tables = connection.introspection.table_names()
        if "django_migrations" not in tables or not tables:
            return (f"{_where()} is not prepared ({text}). Run `{PREPARE}` first: it creates the tables and a "
                    f"researcher account (see docs/getting-started.md).")
        if pending:
            return (f"{_where()} is behind this version of PaceLab ({len(pending)} migration(s) not applied, e.g. "
                    f"{pending[0]}; {text}). Run `manage.py migrate` (or `{PREPARE}`) first.")
        return None
    if _UNREACHABLE.search(text):
        return (f"cannot use {_where()} ({text}). Check DATABASE_URL (or PACELAB_VAR_DIR) and that the database "
                f"server is running, then run `{PREPARE}` if it is new.")
    return None


def run_command(argv: Sequence[str], execute: Callable[[list[str]], None]) -> None:
    """Run ``execute(argv)``; a failure caused by an unprepared database ends with its explanation (exit 1),
    not a traceback. ``--traceback`` keeps the traceback."""
    try:
        execute(list(argv))
    except Exception as exc:  # noqa: BLE001 - only database-state failures are explained; the rest re-raised
        if "--traceback" in argv:
            raise
        message = explain(exc)
        if message is None:
            raise
        command = argv[1] if len(argv) > 1 else "manage.py"
        sys.stderr.write(f"{command}: {message}\n")
        sys.exit(1)
