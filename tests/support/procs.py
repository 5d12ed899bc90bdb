"""Start and stop real server processes for integration tests, and wait until they answer."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _spawn(cmd: list[str], env: dict[str, str], log: Path) -> subprocess.Popen:
    fh = open(log, "wb")  # noqa: SIM115 - kept open for the process's life
    return subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=fh, stderr=subprocess.STDOUT, start_new_session=True)


def wait_http(url: str, proc: subprocess.Popen, log: Path, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"process exited with {proc.returncode}:\n{log.read_text(errors='replace')}")
        try:
            with urllib.request.urlopen(url, timeout=2) as r:
                if r.status == 200:
                    return
        except OSError:
            time.sleep(0.1)
    raise RuntimeError(f"{url} did not answer within {timeout}s:\n{log.read_text(errors='replace')}")


def start_daphne(port: int, env: dict[str, str], log: Path) -> subprocess.Popen:
    proc = _spawn([str(BIN / "daphne"), "-b", "127.0.0.1", "-p", str(port), "pacelab.asgi:application"], env, log)
    proc.log = log  # type: ignore[attr-defined]
    try:
        wait_http(f"http://127.0.0.1:{port}/healthz", proc, log)
    except RuntimeError:
        stop(proc)
        raise
    return proc


def start_celery_worker(queue: str, env: dict[str, str], log: Path, timeout: float = 60.0) -> subprocess.Popen:
    cmd = [str(BIN / "celery"), "-A", "pacelab.celery", "worker", "-P", "solo", "-Q", queue, "-n", f"{queue}@%h",
           "--without-gossip", "--without-mingle", "--without-heartbeat", "-l", "info"]
    proc = _spawn(cmd, env, log)
    proc.log = log  # type: ignore[attr-defined]
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"celery worker exited:\n{log.read_text(errors='replace')}")
        if b" ready." in log.read_bytes():
            return proc
        time.sleep(0.2)
    raise RuntimeError(f"celery worker not ready within {timeout}s:\n{log.read_text(errors='replace')}")


def stop(proc: subprocess.Popen, sig: int = signal.SIGTERM, timeout: float = 10.0) -> None:
    if proc.poll() is not None:
        return
    try:
        os.killpg(proc.pid, sig)
    except ProcessLookupError:
        return
    try:
        proc.wait(timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(5)


def free_ports(n: int) -> int:
    """A base port with ``n`` consecutive free ports (scripts/serve takes --base-port and counts up)."""
    for _ in range(50):
        base = free_port()
        if base + n >= 65535:
            continue
        try:
            socks = []
            for p in range(base, base + n):
                s = socket.socket()
                socks.append(s)
                s.bind(("127.0.0.1", p))
            return base
        except OSError:
            continue
        finally:
            for s in socks:
                s.close()
    raise RuntimeError(f"no {n} consecutive free ports")


def serve_env(env: dict[str, str], var_dir: Path) -> dict[str, str]:
    """``env`` for scripts/serve with its own var dir (logs, pid files, collected static) and the checkout's
    tokenizers (not vendored again)."""
    out = dict(env, PACELAB_VAR_DIR=str(var_dir),
               PACELAB_TOKENIZER_DIR=env.get("PACELAB_TOKENIZER_DIR", str(ROOT / "var" / "tokenizers")))
    out.pop("SERVE_STATIC", None)  # production: WhiteNoise, as deployed
    return out


def start_serve(args: list[str], env: dict[str, str], log: Path, ports: list[int],
                timeout: float = 180.0) -> subprocess.Popen:
    """scripts/serve with ``args``; returns once every port in ``ports`` answers /healthz."""
    proc = _spawn([str(ROOT / "scripts" / "serve"), *args], env, log)
    proc.log = log  # type: ignore[attr-defined]
    try:
        for port in ports:
            wait_http(f"http://127.0.0.1:{port}/healthz", proc, log, timeout)
    except RuntimeError:
        stop(proc)  # never leave its children behind for the next test
        raise
    return proc


def pid_of(var_dir: Path, name: str) -> int:
    """The pid scripts/serve recorded for its child ``name`` (e.g. ``daphne-8001``, ``celery-worker``)."""
    return int((var_dir / "run" / f"{name}.pid").read_text())
