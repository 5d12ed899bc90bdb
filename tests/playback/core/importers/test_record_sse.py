"""scripts/record_sse.py against a real local SSE server: the capture imports and its times follow the server."""

import json
import os
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from playback.core.importers import detect, load
from playback.core.metrics import compute

SCRIPT = Path(__file__).parents[4] / "scripts" / "record_sse.py"
# (sleep before the event in s, event) for the OpenAI server: role chunk, three content chunks, usage, [DONE].
OPENAI_EVENTS = [
    (0.12, {"choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}}]}),
    (0.10, {"choices": [{"index": 0, "delta": {"content": "Hello"}}]}),
    (0.06, {"choices": [{"index": 0, "delta": {"content": " wörld"}}]}),
    (0.06, {"choices": [{"index": 0, "delta": {"content": "!"}, "finish_reason": "stop"}]}),
    (0.0, {"choices": [], "usage": {"prompt_tokens": 3, "completion_tokens": 3}}),
    (0.0, "[DONE]"),
]
ANTHROPIC_EVENTS = [
    (0.05, {"type": "message_start", "message": {"id": "msg_1", "model": "c", "usage": {"output_tokens": 1}}}),
    (0.0, {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
    (0.08, {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Hi"}}),
    (0.05, {"type": "ping"}),
    (0.05, {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": " there"}}),
    (0.0, {"type": "content_block_stop", "index": 0}),
    (0.0, {"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 2}}),
    (0.0, {"type": "message_stop"}),
]


class Handler(BaseHTTPRequestHandler):
    seen: list[dict] = []

    def log_message(self, *args):  # keep test output quiet
        pass

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        Handler.seen.append({"path": self.path, "headers": dict(self.headers), "body": body})
        if self.path == "/fail":
            payload = b'{"error": {"message": "no such model"}}\n'
            self.send_response(404)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)
            return
        anthropic = self.path == "/v1/messages"
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.end_headers()  # HTTP/1.0: the body ends when the connection closes
        for pause, obj in ANTHROPIC_EVENTS if anthropic else OPENAI_EVENTS:
            time.sleep(pause)
            data = obj if isinstance(obj, str) else json.dumps(obj, ensure_ascii=False)
            head = f"event: {obj['type']}\n" if anthropic else ""
            self.wfile.write(f"{head}data: {data}\n\n".encode())
            self.wfile.flush()


@pytest.fixture(scope="module")
def server():
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


def record(*args: str, env_key: str | None = None) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "PACELAB_TEST_KEY"}
    if env_key is not None:
        env["PACELAB_TEST_KEY"] = env_key
    return subprocess.run(
        [sys.executable, str(SCRIPT), *args], capture_output=True, text=True, env=env, timeout=30, check=False
    )


@pytest.mark.parametrize("client", ["httpx", "urllib"])
def test_recorded_openai_capture_times_follow_the_server_sleeps(server, tmp_path, client):
    out = tmp_path / "cap.sse"
    done = record(
        "--url", f"{server}/v1/chat/completions", "--model", "m", "--prompt", "Say hello",
        "--api-key-env", "PACELAB_TEST_KEY", "--out", str(out), "--client", client, env_key="sekret-123",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    seen = Handler.seen[-1]
    assert seen["headers"]["Authorization"] == "Bearer sekret-123"
    assert seen["body"]["stream"] is True and seen["body"]["messages"][-1]["content"] == "Say hello"
    assert "sekret" not in out.read_text(encoding="utf-8")

    assert detect(out) == "openai_sse"
    stream = load(out).streams[0]
    assert stream.meta.prompt == "Say hello" and stream.meta.model == "m"
    assert [p.text for p in stream.pieces] == ["", "Hello", " wörld", "!"]
    assert stream.output_tokens == 3
    expected, t = [], 0.0
    for pause, _ in OPENAI_EVENTS[:4]:
        t += pause * 1000
        expected.append(t)
    times = [p.t_ms for p in stream.pieces]
    for got, want in zip(times, expected, strict=True):
        assert want - 1.0 <= got <= want + 150.0, (times, expected)
    for (a, b), (pause, _) in zip(zip(times, times[1:]), OPENAI_EVENTS[1:4], strict=True):
        assert b - a >= pause * 1000 - 5.0, times
    assert compute(stream).ttft_ms == times[1]


def test_recorded_anthropic_capture_and_repeat_in_one_file(server, tmp_path):
    out = tmp_path / "cap.sse"
    done = record(
        "--url", f"{server}/v1/messages", "--model", "c", "--prompt", "Hi?", "--anthropic",
        "--api-key-env", "PACELAB_TEST_KEY", "--out", str(out), "--repeat", "2", env_key="k-anth",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    seen = Handler.seen[-1]
    assert seen["headers"]["x-api-key"] == "k-anth" and "anthropic-version" in seen["headers"]
    assert seen["body"]["max_tokens"] > 0
    assert detect(out) == "anthropic_sse"
    result = load(out)
    assert len(result.streams) == 2
    for stream in result.streams:
        m = compute(stream)
        assert stream.text == "Hi there" and stream.output_tokens == 2
        assert 130.0 - 1.0 <= m.ttft_ms <= 130.0 + 150.0
        assert m.e2e_ms - m.ttft_ms >= 100.0 - 5.0


def test_http_error_is_recorded_and_imported_as_a_failed_request(server, tmp_path):
    out = tmp_path / "cap.sse"
    done = record("--url", f"{server}/fail", "--model", "m", "--prompt", "x", "--out", str(out))
    assert done.returncode == 1 and "404" in done.stderr
    result = load(out, "openai_sse")
    assert result.streams == [] and "HTTP status 404" in result.notes[0]


def test_missing_key_variable_is_refused_before_sending(server, tmp_path):
    count = len(Handler.seen)
    done = record(
        "--url", f"{server}/v1/chat/completions", "--model", "m", "--prompt", "x",
        "--api-key-env", "PACELAB_TEST_KEY", "--out", str(tmp_path / "c.sse"),
    )  # fmt: skip
    assert done.returncode != 0 and "PACELAB_TEST_KEY" in done.stderr
    assert len(Handler.seen) == count and not (tmp_path / "c.sse").exists()
