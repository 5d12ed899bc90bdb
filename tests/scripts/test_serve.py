"""scripts/serve, the local production-mode runner (issue 41, items 5 and 7): it refuses to start with
``check --deploy`` warnings unless ``--local-trial``, says who serves /static/ (WhiteNoise), and supervises its
children: a Daphne killed with SIGKILL is started again on its port while every other process keeps running."""

import os
import signal
import subprocess
import time
import urllib.request
import uuid
from pathlib import Path

import pytest
from procs import ROOT, free_ports, pid_of, serve_env, start_serve, stop

pytestmark = [pytest.mark.integration]


def _answers(port: int) -> bool:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=2) as r:
            return r.status == 200
    except OSError:
        return False


def _alive(pid: int) -> bool:
    """Running, not merely a zombie waiting for its (re-parented) parent to reap it."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def test_check_deploy_warnings_stop_serve_without_local_trial(service_env, tmp_path):
    env = serve_env(service_env, tmp_path / "var")
    env.pop("HTTPS", None)  # no TLS settings: check --deploy warns (W004, W008, W012, W016)
    port = free_ports(1)
    out = subprocess.run([str(ROOT / "scripts" / "serve"), "--processes", "1", "--base-port", str(port)], cwd=ROOT,
                         env=env, capture_output=True, text=True, timeout=300, check=False)
    assert out.returncode != 0, out.stderr
    assert "check --deploy found the problems above" in out.stderr and "--local-trial" in out.stderr
    assert "security.W" in out.stderr  # the warnings themselves are shown
    assert not _answers(port)


def test_a_killed_daphne_is_restarted_and_nothing_else_stops(service_env, tmp_path):
    var = tmp_path / "var"
    env = serve_env(service_env, var) | {"PACELAB_TASK_QUEUE": f"test-serve-{uuid.uuid4().hex[:8]}"}
    base = free_ports(2)
    ports = [base, base + 1]
    proc = start_serve(["--processes", "2", "--base-port", str(base), "--local-trial"], env, tmp_path / "serve.log",
                       ports)
    try:
        log = tmp_path / "serve.log"
        deadline = time.monotonic() + 60
        while not (var / "run" / "celery-worker.pid").exists() or not (var / "run" / "celery-beat.pid").exists():
            assert time.monotonic() < deadline, log.read_text()
            time.sleep(0.2)
        before = {name: pid_of(var, name) for name in (f"daphne-{base}", f"daphne-{base + 1}", "celery-worker",
                                                       "celery-beat")}
        assert "static files: WhiteNoise serves /static/" in log.read_text()
        with urllib.request.urlopen(f"http://127.0.0.1:{base}/static/js/base.js", timeout=5) as r:
            assert r.status == 200 and "javascript" in r.headers["Content-Type"]

        os.kill(before[f"daphne-{base}"], signal.SIGKILL)
        t_kill = time.monotonic()
        while _answers(base):  # until the dead process's port stops answering
            time.sleep(0.05)
        other_down = 0
        while not _answers(base):
            assert time.monotonic() - t_kill < 30, log.read_text()
            other_down += not _answers(base + 1)
            time.sleep(0.1)
        recovery_s = time.monotonic() - t_kill

        after = {name: pid_of(var, name) for name in before}
        assert after[f"daphne-{base}"] != before[f"daphne-{base}"]
        for name in (f"daphne-{base + 1}", "celery-worker", "celery-beat"):
            assert after[name] == before[name] and _alive(before[name]), name
        assert other_down == 0 and proc.poll() is None
        text = log.read_text()
        assert f"daphne-{base} (pid {before[f'daphne-{base}']}) was killed by SIGKILL; restarting in 1s" in text
        with urllib.request.urlopen(f"http://127.0.0.1:{base}/static/js/base.js", timeout=5) as r:
            assert r.status == 200
        print(f"\nscripts/serve: daphne on {base} killed with SIGKILL, answering again after {recovery_s:.1f}s; "
              f"daphne on {base + 1}, the worker and beat kept running")
    finally:
        stop(proc)
    # a clean stop takes every child with it (a loaded machine may need a few seconds for Celery's warm shutdown)
    deadline = time.monotonic() + 20
    while any(_alive(pid) for pid in after.values()) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not any(_alive(pid) for pid in after.values()), {n: p for n, p in after.items() if _alive(p)}
