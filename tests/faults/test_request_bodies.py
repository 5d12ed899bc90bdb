"""Large request bodies against a real Daphne (issue 41, item 6): refused by Content-Length before they are held,
capped while they stream in without a length, and answered in JSON on /p/<token>/submit; the Daphne process's
memory stays where it was."""

import json
import socket
import time
from pathlib import Path

import httpx
import pytest
from django.conf import settings
from fault_client import Person

pytestmark = pytest.mark.integration
MB = 1024 * 1024


def _rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise AssertionError("no VmRSS")


def _daphne_pid(port: int) -> int:
    """The Daphne process listening on ``port`` (the fixture's Popen is not returned)."""
    inode = None
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            parts = line.split()
            if int(parts[1].split(":")[1], 16) == port and parts[3] == "0A":  # LISTEN
                inode = parts[9]
    assert inode, f"nobody listens on {port}"
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            for fd in (proc / "fd").iterdir():
                if fd.readlink().as_posix() == f"socket:[{inode}]":
                    return int(proc.name)
        except OSError:
            continue
    raise AssertionError(f"no process owns port {port}")


def _raw_post(port: int, path: str, headers: dict, body_chunks, read_timeout: float = 60.0) -> tuple[int, dict, bytes]:
    """A POST over a plain socket, sending ``body_chunks`` while reading whatever the server answers."""
    s = socket.create_connection(("127.0.0.1", port), timeout=read_timeout)
    head = f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n" + "".join(f"{k}: {v}\r\n" for k, v in headers.items())
    s.sendall(head.encode() + b"\r\n")
    try:
        for chunk in body_chunks:
            s.sendall(chunk)
    except (BrokenPipeError, ConnectionResetError):
        pass  # the server had answered and closed: read what it said
    data = b""
    try:
        while True:
            got = s.recv(65536)
            if not got:
                break
            data += got
            if b"\r\n\r\n" in data:
                head_part, _, rest = data.partition(b"\r\n\r\n")
                length = next((int(h.split(b":")[1]) for h in head_part.split(b"\r\n")
                               if h.lower().startswith(b"content-length:")), None)
                if length is not None and len(rest) >= length:
                    break
    except (ConnectionResetError, TimeoutError):
        pass
    s.close()
    head_part, _, rest = data.partition(b"\r\n\r\n")
    lines = head_part.decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1])
    hdrs = {k.strip().lower(): v.strip() for k, v in (line.split(":", 1) for line in lines[1:] if ":" in line)}
    return status, hdrs, rest


def _zeros(total: int, chunk: int = MB):
    sent = 0
    while sent < total:
        n = min(chunk, total - sent)
        yield b"0" * n
        sent += n


def _chunked(total: int, chunk: int = MB):
    for piece in _zeros(total, chunk):
        yield f"{len(piece):x}\r\n".encode() + piece + b"\r\n"
    yield b"0\r\n\r\n"


def test_a_300_mb_submit_is_refused_in_json_without_growing_daphne(fault_env, daphne_server, live_study):
    port = int(daphne_server.rsplit(":", 1)[1])
    me = Person(daphne_server, live_study.slug, "big-body")
    view = me.view()
    path = f"/p/{me.token}/submit"
    cookies = "; ".join(f"{k}={v}" for k, v in me.client.cookies.items())
    headers = {"Content-Type": "application/json", "Origin": daphne_server, "Cookie": cookies,
               "X-CSRFToken": me.client.cookies.get("csrftoken", "")}
    pid = _daphne_pid(port)
    before = _rss_mb(pid)

    t0 = time.monotonic()
    status, hdrs, body = _raw_post(port, path, dict(headers, **{"Content-Length": str(300 * MB)}), _zeros(300 * MB))
    declared_s = time.monotonic() - t0
    assert status == 413 and hdrs["content-type"] == "application/json", (status, hdrs, body[:200])
    assert json.loads(body) == {"ok": False, "code": "too_large", "error": json.loads(body)["error"]}

    # no length given (chunked): counted as it streams, refused past the limit
    status, hdrs, body = _raw_post(port, path, dict(headers, **{"Transfer-Encoding": "chunked"}), _chunked(300 * MB))
    assert status == 413 and json.loads(body)["code"] == "too_large", (status, body[:200])
    after = _rss_mb(pid)
    assert after - before < 40, f"Daphne grew from {before:.0f} MB to {after:.0f} MB"

    # under the server's limit but over the submit's: the view refuses it by its length, in JSON
    big = json.dumps({"client_id": "x" * 32, "step": view["step"], "payload": {"pad": "y" * (512 * 1024)}})
    r = me.client.post(path, content=big, headers={k: v for k, v in headers.items() if k != "Cookie"})
    assert r.status_code == 413 and r.json()["code"] == "too_large"
    assert len(big) < settings.MAX_REQUEST_BODY_BYTES
    # and the participant goes on as before
    assert me.answer(view)["ok"] is True
    print(f"\n300 MB submit refused in {declared_s:.1f}s; Daphne RSS {before:.0f} -> {after:.0f} MB")


def test_a_study_file_sized_upload_still_fits(daphne_server):
    """The largest legitimate body (a 512 KiB study file in a form) is under the server's limit."""
    r = httpx.post(f"{daphne_server}/accounts/login/", content=b"a=" + b"b" * (600 * 1024),
                   headers={"Content-Type": "application/x-www-form-urlencoded"})
    assert r.status_code == 403  # reached Django (CSRF), not refused for its size
