#!/usr/bin/env python3
"""Record a timestamped SSE capture (PaceLab ``pacelab-sse v1``) of a streaming LLM request.

Sends one streaming request to an OpenAI-compatible Chat Completions endpoint (or, with ``--anthropic``,
to an Anthropic Messages endpoint) and writes every line of the response body prefixed by the elapsed
milliseconds since the request was sent (``time.perf_counter_ns``) and a tab, after a header line
``# pacelab-sse v1 {...}``. Lines are buffered in memory and written after the response ends, so disk
writes never delay the reading. See docs/trace-formats.md for the format.

Standalone: standard library plus httpx when installed (else urllib). The API key is read from the
environment variable named by ``--api-key-env``; it is never taken on the command line nor written out.

    python scripts/record_sse.py --url http://localhost:8000/v1/chat/completions --model M \\
        --prompt "Explain streaming." --api-key-env OPENAI_API_KEY --out capture.sse
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import sys
import time
from pathlib import Path

FORMAT_VERSION = 1
ANTHROPIC_VERSION = "2023-06-01"


def build_request(args: argparse.Namespace, prompt: str) -> tuple[dict, dict]:
    """Headers and JSON body of the streaming request."""
    headers = {"Content-Type": "application/json", "Accept": "text/event-stream"}
    key = os.environ.get(args.api_key_env, "") if args.api_key_env else ""
    if args.api_key_env and not key:
        raise SystemExit(f"record_sse: environment variable {args.api_key_env} is empty or not set")
    body: dict = {"model": args.model, "messages": [{"role": "user", "content": prompt}], "stream": True}
    if args.anthropic:
        headers["anthropic-version"] = ANTHROPIC_VERSION
        if key:
            headers["x-api-key"] = key
        body["max_tokens"] = args.max_tokens or 1024
    else:
        if key:
            headers["Authorization"] = f"Bearer {key}"
        body["stream_options"] = {"include_usage": True}
        if args.max_tokens:
            body["max_tokens"] = args.max_tokens
    if args.temperature is not None:
        body["temperature"] = args.temperature
    return headers, body


def _stream_httpx(url: str, headers: dict, payload: bytes, timeout: float, start_ns: list[int]):
    import httpx

    with httpx.Client(timeout=httpx.Timeout(timeout)) as client:
        start_ns.append(time.perf_counter_ns())
        with client.stream("POST", url, content=payload, headers=headers) as resp:
            yield resp.status_code
            yield from resp.iter_lines()


def _stream_urllib(url: str, headers: dict, payload: bytes, timeout: float, start_ns: list[int]):
    import urllib.error
    import urllib.request

    req = urllib.request.Request(url, data=payload, headers=headers, method="POST")
    start_ns.append(time.perf_counter_ns())
    try:
        resp = urllib.request.urlopen(req, timeout=timeout)
    except urllib.error.HTTPError as err:
        resp = err
    with resp:
        yield resp.status
        while True:
            raw = resp.readline()
            if not raw:
                break
            yield raw.decode("utf-8", errors="replace").rstrip("\r\n")


def record(args: argparse.Namespace, prompt: str) -> list[str]:
    """The capture lines (header first) of one request."""
    headers, body = build_request(args, prompt)
    payload = json.dumps(body, ensure_ascii=False).encode("utf-8")
    client = args.client
    if client == "auto":
        try:
            import httpx  # noqa: F401

            client = "httpx"
        except ImportError:
            client = "urllib"
    stream = _stream_httpx if client == "httpx" else _stream_urllib
    started_at = dt.datetime.now(dt.UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
    start_ns: list[int] = []
    lines: list[tuple[int, str]] = []
    status = 0
    error = ""
    try:
        gen = stream(args.url, headers, payload, args.timeout, start_ns)
        status = next(gen)
        for line in gen:
            lines.append((time.perf_counter_ns(), line))
    except Exception as exc:  # the capture records the failure; the importer treats it as a failed request
        error = f"{type(exc).__name__}: {exc}"
    header = {
        "api": "anthropic" if args.anthropic else "openai",
        "started_at": started_at,
        "url": args.url,
        "model": args.model,
        "prompt": prompt,
        "status": status,
        "client": client,
        "request": body,
    }
    if error:
        header["error"] = error
    out = [f"# pacelab-sse v{FORMAT_VERSION} {json.dumps(header, ensure_ascii=False)}"]
    t0 = start_ns[0] if start_ns else 0
    out += [f"{(t - t0) / 1e6:.3f}\t{line}" for t, line in lines]
    return out


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description="Record a timestamped SSE capture (pacelab-sse v1).")
    p.add_argument("--url", required=True, help="full endpoint URL, e.g. http://host:8000/v1/chat/completions")
    p.add_argument("--model", required=True)
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--prompt")
    src.add_argument("--prompt-file", type=Path)
    p.add_argument("--api-key-env", metavar="NAME", help="name of the environment variable holding the API key")
    p.add_argument("--out", required=True, type=Path, help="capture file to write")
    p.add_argument("--append", action="store_true", help="append to --out instead of replacing it")
    p.add_argument("--repeat", type=int, default=1, help="record this many requests in a row (one file)")
    p.add_argument("--anthropic", action="store_true", help="use the Anthropic Messages API")
    p.add_argument("--max-tokens", type=int)
    p.add_argument("--temperature", type=float)
    p.add_argument("--timeout", type=float, default=300.0, help="seconds")
    p.add_argument("--client", choices=("auto", "httpx", "urllib"), default="auto")
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    prompt = args.prompt if args.prompt is not None else args.prompt_file.read_text(encoding="utf-8")
    captured: list[str] = []
    failed = 0
    for _ in range(max(args.repeat, 1)):
        lines = record(args, prompt)
        header = json.loads(lines[0].split(" ", 3)[3])
        if header.get("error") or header.get("status") != 200:
            failed += 1
            print(
                f"record_sse: request failed: {header.get('error') or 'HTTP ' + str(header.get('status'))}",
                file=sys.stderr,
            )
        captured += lines
    with args.out.open("a" if args.append else "w", encoding="utf-8", newline="\n") as fh:
        fh.write("\n".join(captured) + "\n")
    print(f"record_sse: wrote {args.repeat - failed} ok / {failed} failed request(s) to {args.out}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
