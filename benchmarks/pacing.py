"""Live pacing under load: N concurrent 40 tokens/s streams against one Daphne process, absolute-deadline pacer
side by side with the naive ``await asyncio.sleep(interval)`` pacer, in the same run.

    .venv/bin/python benchmarks/pacing.py --n 50,200,500 --seconds 60
    .venv/bin/python benchmarks/pacing.py --n 20 --seconds 5          # smoke test

Starts its own Daphne: the embedded mode (SQLite in a temporary PACELAB_VAR_DIR) unless DATABASE_URL is set,
then that database (and REDIS_URL if set). Client lateness is measured at the client as
``(arrival_i − arrival_0) − (t_ms_i − t_ms_0)`` (relative to each stream's first frame); drift is the median
lateness of a stream's last 10 frames minus that of its first 10 (median over streams, and the worst stream);
server lateness is the ``late_ms`` the server reports for each send (when the send started, against the
frame's deadline). Every socket connects and binds its playback first; the streams start together once all are
ready (``--connect-s`` after launch), spread at random over ``--start-spread-s`` (default 1 s: N participants
pressing start within one second; ``0.025`` puts every start within one token interval), so they also end
within that window. Every frame of every stream counts, the start and close storms included; the connection
storm is kept out of the streams (participants do not arrive 500 at once, and a handshake is not pacing), and a
socket that was not ready by then is reported. The clients run in ``--client-procs``
processes so they are not the bottleneck; on a small machine they share the cores with the server, so they
(and this process, which gathers their results) run at a lower priority: niced (``--client-nice``, default 10)
and in the ``SCHED_IDLE`` class (``--no-client-idle`` to turn it off), which the kernel preempts as soon as the
server wakes up, as if the clients ran on another machine; ``--client-nice 0 --no-client-idle`` lets them
compete. ``busy`` is how much of the machine's CPU the run used and ``steal`` how much the hypervisor
took: on a shared virtual machine a run with several % steal shows tens of ms that are not the server's.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
sys.path.insert(0, str(ROOT))


def _percentile(values: list[float], q: float) -> float:
    from playback.core.fidelity import percentile

    return percentile(values, q)


def _cpu_times() -> list[int]:
    """The machine's aggregate CPU times from /proc/stat (user, nice, system, idle, iowait, irq, softirq,
    steal, ...), to report how much of the run the hypervisor took away (steal) and how busy the cores were."""
    try:
        with open("/proc/stat") as fh:
            return [int(x) for x in fh.readline().split()[1:9]]
    except OSError:
        return [0] * 8


def _cpu_share(before: list[int], after: list[int]) -> tuple[float, float]:
    """(busy %, steal %) of the machine between two ``_cpu_times`` readings."""
    d = [b - a for a, b in zip(before, after, strict=True)]
    total = sum(d) or 1
    return 100.0 * (total - d[3] - d[4] - d[7]) / total, 100.0 * d[7] / total


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _environment(var_dir: Path) -> dict[str, str]:
    var_dir.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ)
    if not env.get("DATABASE_URL"):
        env.pop("REDIS_URL", None)
    env.setdefault("SECRET_KEY", "benchmark-only")
    env.update(PACELAB_VAR_DIR=str(var_dir), DJANGO_SETTINGS_MODULE="pacelab.settings", PYTHONUNBUFFERED="1",
               PYTHONPATH=os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH", "")) if p))
    return env


def _start_daphne(port: int, env: dict[str, str], log: Path) -> subprocess.Popen:
    fh = open(log, "wb")  # noqa: SIM115 - kept open for the process's life
    proc = subprocess.Popen([str(BIN / "daphne"), "-b", "127.0.0.1", "-p", str(port), "pacelab.asgi:application"],
                            cwd=ROOT, env=env, stdout=fh, stderr=subprocess.STDOUT, start_new_session=True)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"daphne exited:\n{log.read_text(errors='replace')}")
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=2) as r:
                if r.status == 200:
                    return proc
        except OSError:
            time.sleep(0.1)
    raise SystemExit(f"daphne did not answer:\n{log.read_text(errors='replace')}")


def _stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)


def _create_playbacks(n: int, seconds: float, rate: float, pacer: str) -> list[str]:
    from playback.core.stream import Piece, Stream
    from playback.services.delivery import playback_create

    interval = 1000.0 / rate
    stream = Stream(tuple(Piece("tok ", i * interval) for i in range(int(seconds * rate))))
    return [playback_create(stream=stream, mode="live", config={"pacer": pacer}).token for _ in range(n)]


async def _one_stream(url: str, token: str, start_at: float) -> dict:
    """One participant's socket; a failed connection is reported (not raised) so the run still prints."""
    try:
        return await _play_one(url, token, start_at)
    except Exception as exc:  # noqa: BLE001 - any failure is one incomplete stream in the table
        return {"t_ms": [], "arrival": [], "server_late": [], "end": {"error": f"{type(exc).__name__}: {exc}"}}


async def _play_one(url: str, token: str, start_at: float) -> dict:
    import websockets

    async with websockets.connect(url, origin="http://127.0.0.1", max_queue=None) as ws:
        await ws.send(json.dumps({"type": "hello", "token": token}))
        ready = json.loads(await ws.recv())
        if ready["type"] != "ready":
            raise RuntimeError(f"hello refused: {ready}")
        wait = start_at - time.monotonic()  # one clock for all processes: CLOCK_MONOTONIC
        await asyncio.sleep(max(wait, 0.0))
        await ws.send(json.dumps({"type": "start"}))
        loop = asyncio.get_running_loop()
        t_ms, arrival, late = [], [], []
        while True:
            msg = json.loads(await ws.recv())
            now = loop.time() * 1000.0
            if msg["type"] != "frame":
                break
            t_ms.append(msg["t_ms"])
            arrival.append(now)
            late.append(msg["late_ms"])
    return {"t_ms": t_ms, "arrival": arrival, "server_late": late, "end": msg, "late_ready": wait < 0}


def _yield_cpu(nice: int, idle: bool) -> None:
    """Lower this process's priority so the load generator does not take the server's cores.

    ``SCHED_IDLE`` matters more than the nice value: a niced process still runs until the scheduler's next tick
    when the server wakes up on its core (several ms of lateness that are the benchmark's, not the server's);
    an idle-class process is preempted at once, as if the clients ran on another machine."""
    if nice:
        os.nice(nice)
    if idle and hasattr(os, "SCHED_IDLE"):
        os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))


def _client_worker(url: str, tokens: list[str], spread_s: float, nice: int = 0, start_at: float = 0.0,
                   idle: bool = True) -> list[dict]:
    _yield_cpu(nice, idle)  # the load generator yields the shared cores to the server under test
    async def run() -> list[dict]:
        return await asyncio.gather(*(_one_stream(url, t, start_at + random.uniform(0, spread_s)) for t in tokens))

    return asyncio.run(run())


def _summarise(streams: list[dict], expected: int) -> dict[str, float]:
    client, server, drifts, complete = [], [], [], 0
    for s in streams:
        complete += s["end"].get("reason") == "complete" and len(s["t_ms"]) == expected
        if not s["t_ms"]:
            continue
        a0, t0 = s["arrival"][0], s["t_ms"][0]
        late = [(a - a0) - (t - t0) for a, t in zip(s["arrival"], s["t_ms"], strict=True)]
        client.extend(late)
        server.extend(s["server_late"])
        k = min(10, len(late))
        drifts.append(statistics.median(late[-k:]) - statistics.median(late[:k]))
    return {
        "complete": complete,
        "c50": _percentile(client, 50), "c99": _percentile(client, 99), "cmax": max(client),
        "drift": statistics.median(drifts), "drift_max": max(drifts),
        "s50": _percentile(server, 50), "s99": _percentile(server, 99), "smax": max(server),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", default="50,200,500", help="concurrent streams, comma-separated")
    parser.add_argument("--seconds", type=float, default=60.0, help="length of each stream")
    parser.add_argument("--rate", type=float, default=40.0, help="tokens per second")
    parser.add_argument("--client-procs", type=int, default=2, help="client processes")
    parser.add_argument("--client-nice", type=int, default=10,
                        help="niceness of the client processes (0: compete with the server for the cores)")
    parser.add_argument("--start-spread-s", type=float, default=1.0,
                        help="the streams start at random within this many seconds of each other")
    parser.add_argument("--client-idle", action=argparse.BooleanOptionalAction, default=True,
                        help="run the clients in the SCHED_IDLE class (preempted at once by the server)")
    parser.add_argument("--pacers", default="absolute,naive", help="pacers to run, comma-separated")
    parser.add_argument("--connect-s", type=float, default=None,
                        help="seconds for all sockets to connect before the streams start (default 2 + N/100)")
    args = parser.parse_args(argv)
    sizes = [int(x) for x in args.n.split(",") if x.strip()]

    with tempfile.TemporaryDirectory(prefix="pacelab-bench-") as tmp:
        env = _environment(Path(tmp) / "var")
        subprocess.run([sys.executable, "manage.py", "migrate", "--noinput", "-v", "0"], cwd=ROOT, env=env,
                       check=True)
        os.environ.update(env)
        import django

        django.setup()
        from django.db import connections

        plan = [(n, p, _create_playbacks(n, args.seconds, args.rate, p)) for n in sizes
                for p in args.pacers.split(",")]
        connections.close_all()
        port = _free_port()
        daphne = _start_daphne(port, env, Path(tmp) / "daphne.log")
        _yield_cpu(args.client_nice, args.client_idle)  # this process gathers the clients' results: it yields too
        url = f"ws://127.0.0.1:{port}/ws/playback/"
        mode = "PostgreSQL" if os.environ.get("DATABASE_URL") else "embedded (SQLite)"
        print(f"{args.rate:g} tokens/s, {args.seconds:g} s streams, one Daphne process, {mode}, "
              f"{args.client_procs} client process(es); lateness in ms")
        header = (f"{'pacer':<9}{'N':>5}{'complete':>10} | {'client p50':>10}{'p99':>8}{'max':>8}"
                  f"{'drift':>8}{'drift max':>10} | {'server p50':>10}{'p99':>8}{'max':>8} | {'busy':>6}{'steal':>7}")
        print(header)
        print("-" * len(header))
        expected = int(args.seconds * args.rate)
        try:
            for n, pacer_name, tokens in plan:
                procs = max(1, min(args.client_procs, n))
                chunks = [tokens[i::procs] for i in range(procs)]
                cpu0 = _cpu_times()
                start_at = time.monotonic() + (args.connect_s if args.connect_s is not None else 2 + n / 100)
                with ProcessPoolExecutor(procs) as pool:
                    results = pool.map(_client_worker, [url] * procs, chunks, [args.start_spread_s] * procs,
                                       [args.client_nice] * procs, [start_at] * procs, [args.client_idle] * procs)
                    streams = [s for chunk in results for s in chunk]
                r = _summarise(streams, expected)
                busy, steal = _cpu_share(cpu0, _cpu_times())
                done = f"{r['complete']}/{n}"
                print(f"{pacer_name:<9}{n:>5}{done:>10} | {r['c50']:>10.1f}{r['c99']:>8.1f}"
                      f"{r['cmax']:>8.1f}{r['drift']:>8.1f}{r['drift_max']:>10.1f} | {r['s50']:>10.1f}"
                      f"{r['s99']:>8.1f}{r['smax']:>8.1f} | {busy:>5.0f}%{steal:>6.1f}%", flush=True)
                late_ready = sum(bool(s.get("late_ready")) for s in streams)
                if late_ready:
                    print(f"  {late_ready} socket(s) were not ready when the streams started (raise --connect-s)")
                errors = sorted({s["end"]["error"] for s in streams if "error" in s["end"]})
                if errors:
                    print(f"  {sum('error' in s['end'] for s in streams)} stream(s) failed: {'; '.join(errors)[:300]}")
                    print("  daphne log (last lines): " + " | ".join(
                        (Path(tmp) / "daphne.log").read_text(errors="replace").splitlines()[-5:]))
        finally:
            _stop(daphne)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
