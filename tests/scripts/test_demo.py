"""The README's first command: scripts/demo sets up, loads the demo, prints a login, and serves; twice."""

import http.cookiejar
import os
import re
import signal
import subprocess
import time
import urllib.request

import pytest
from procs import ROOT, free_port

pytestmark = [pytest.mark.integration]


def _demo_env(tmp_path) -> dict[str, str]:
    dropped = ("DATABASE_URL", "REDIS_URL", "SECRET_KEY", "DJANGO_ALLOW_ASYNC_UNSAFE")
    env = {k: v for k, v in os.environ.items() if k not in dropped}
    env["PACELAB_VAR_DIR"] = str(tmp_path / "var")
    return env


def _serve(env, port, log_path):
    with open(log_path, "w") as log:
        proc = subprocess.Popen(["bash", "scripts/demo", "--port", str(port)], cwd=ROOT, env=env, stdout=log,
                                stderr=subprocess.STDOUT, start_new_session=True)
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline:
        assert proc.poll() is None, log_path.read_text()
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=2) as r:
                if r.status == 200 and "password:" in log_path.read_text():
                    return proc
        except OSError:
            time.sleep(0.3)
    raise AssertionError(log_path.read_text())


def _login(port: int, user: str, password: str) -> str:
    opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar()))
    page = opener.open(f"http://127.0.0.1:{port}/accounts/login/").read().decode()
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page).group(1)
    data = f"csrfmiddlewaretoken={token}&username={user}&password={password}&next=/streams/".encode()
    req = urllib.request.Request(f"http://127.0.0.1:{port}/accounts/login/", data=data,
                                 headers={"Referer": f"http://127.0.0.1:{port}/accounts/login/"})
    return opener.open(req).read().decode()


def test_demo_runs_twice_and_serves_the_demo_with_a_working_login(tmp_path):
    env = _demo_env(tmp_path)
    port = free_port()
    procs = []
    try:
        for i in range(2):  # the second run stops the first server and starts again
            procs.append(_serve(env, port, tmp_path / f"demo{i}.log"))
            if i == 0:
                first_out = (tmp_path / "demo0.log").read_text()
        out = (tmp_path / "demo1.log").read_text()
        assert f"http://127.0.0.1:{port}/" in out
        user = re.search(r"username: (\S+)", out).group(1)
        password = re.search(r"password: (\S+)", out).group(1)
        assert f"password: {password}" in first_out  # the same credentials both times
        assert procs[0].wait(30) is not None  # the first server was stopped
        streams = _login(port, user, password)
        assert "demo-reasoning-en" in streams and "zh-chat · 25 tok/s · qwen3.6" in streams
    finally:
        for p in procs:
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGTERM)
                p.wait(10)
