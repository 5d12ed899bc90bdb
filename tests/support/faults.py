"""Faults for integration tests: kill a process outright, take Redis or PostgreSQL down and bring them back.

Redis and PostgreSQL are the machine's shared services (scripts/test starts them): taking one down disturbs every
test process running at the same time, so tests that do are marked ``serial_services`` and run alone. Outages
are kept short, and the service always comes back (``finally``), also when the test fails.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

REDIS_PORT = 6379


def kill(proc: subprocess.Popen) -> None:
    """SIGKILL a process group started by ``procs._spawn`` (no clean shutdown, no disconnect handlers)."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait(10)


def _run(cmd: list[str], timeout: float = 60.0) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, check=False)


def _wait(check, what: str, timeout: float) -> float:
    """Poll ``check`` until true; returns the seconds waited."""
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout:
        if check():
            return time.monotonic() - t0
        time.sleep(0.1)
    raise RuntimeError(f"{what} within {timeout}s")


# --- Redis ----------------------------------------------------------------------------------------------------


def redis_up() -> bool:
    return _run(["redis-cli", "-h", "127.0.0.1", "-p", str(REDIS_PORT), "ping"], 5).stdout.strip() == "PONG"


def stop_redis() -> None:
    """Shut Redis down without saving (it holds only notifications, the broker's queue and the cache)."""
    _run(["redis-cli", "-h", "127.0.0.1", "-p", str(REDIS_PORT), "shutdown", "nosave"], 10)
    _wait(lambda: not redis_up(), "Redis did not stop", 15)


def start_redis() -> float:
    """Start Redis as scripts/test does; returns the seconds until it answered."""
    if not redis_up():
        _run(["redis-server", "--daemonize", "yes", "--bind", "127.0.0.1", "--port", str(REDIS_PORT),
              "--save", "", "--appendonly", "no"], 15)
    return _wait(redis_up, "Redis did not come back", 20)


@contextlib.contextmanager
def redis_down() -> Iterator[None]:
    """Redis is down inside the block and up again after it (always)."""
    stop_redis()
    try:
        yield
    finally:
        start_redis()


def restart_redis() -> None:
    with redis_down():
        pass


# --- PostgreSQL -----------------------------------------------------------------------------------------------


def pg_version() -> str:
    versions = sorted(Path("/usr/lib/postgresql").iterdir(), key=lambda p: int(p.name) if p.name.isdigit() else 0)
    return versions[-1].name


def postgres_up() -> bool:
    return _run(["pg_isready", "-q", "-h", "127.0.0.1"], 5).returncode == 0


def _pg_ctl(action: str, *extra: str) -> None:
    cmd = [shutil.which("pg_ctlcluster") or "pg_ctlcluster", "--skip-systemctl-redirect", pg_version(), "main",
           action, *extra]
    out = _run(cmd, 60)
    if out.returncode != 0 and action != "stop":
        raise RuntimeError(f"{' '.join(cmd)} failed: {out.stderr}")


def stop_postgres() -> None:
    """Stop PostgreSQL at once (``-m fast``: open connections are cut, as in a crash or failover)."""
    _pg_ctl("stop", "-m", "fast")
    _wait(lambda: not postgres_up(), "PostgreSQL did not stop", 30)


def start_postgres() -> float:
    if not postgres_up():
        _pg_ctl("start")
    return _wait(postgres_up, "PostgreSQL did not come back", 30)


@contextlib.contextmanager
def postgres_down() -> Iterator[None]:
    """PostgreSQL is down inside the block and up again after it (always)."""
    stop_postgres()
    try:
        yield
    finally:
        start_postgres()


def restart_postgres() -> None:
    with postgres_down():
        pass
