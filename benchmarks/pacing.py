"""Live pacing under load: N concurrent 40 tokens/s streams against one Daphne process, each pacer side by side
with a bare asyncio loop (absolute deadlines, no sockets) in the same run, one stalled client among N, and the
streams-per-process capacity at server p99 <= 5 ms.

    .venv/bin/python benchmarks/pacing.py --n 200,500 --seconds 20 --pacers shared,absolute
    .venv/bin/python benchmarks/pacing.py --n 20 --seconds 5 --no-capacity          # smoke test
    .venv/bin/python benchmarks/pacing.py --n 500 --seconds 20 --pacers shared --slow-n 0 --no-aligned \
        --no-capacity --py-spy var/pacing-profile                                   # the profile only

Pacers (``--pacers``, a playback's ``config.pacer``): ``shared`` (the default for live playback: one pacer per
process, one timer for every stream's next deadline, ``playback/core/live_pacer.py``), ``absolute`` (one task and
one timer per stream, the previous default) and ``naive`` (``await asyncio.sleep(interval)``, which drifts). The
``bare`` rows run N asyncio tasks with absolute deadlines and no sockets in a separate process at the server's
priority: what the machine's scheduling noise alone costs, the floor the ``x bare`` column divides by. The
``/slow`` row (``--slow-n``, default the largest N) paces one stream among N to a client that stops reading after
a few frames (a 4 KiB receive buffer and 32 KiB frames, so the kernel's buffers fill within seconds and the
server has to hold the rest) and reads everything once the others have ended; its lateness columns are the other
N-1 streams', and it counts as complete only if the stalled client then got every frame in order. The capacity
(``--capacity``) probes the shared pacer at growing N (``--capacity-seconds`` long streams) and then bisects:
the largest N with every stream complete and server p99 <= ``--capacity-p99-ms``.

Starts its own Daphne: the embedded mode (SQLite in a temporary PACELAB_VAR_DIR) unless DATABASE_URL is set,
then that database (and REDIS_URL if set). Client lateness is measured at the client as
``(arrival_i − arrival_0) − (t_ms_i − t_ms_0)`` (relative to each stream's first frame); drift is the median
lateness of a stream's last 10 frames minus that of its first 10 (median over streams, and the worst stream);
server lateness is the ``late_ms`` the server reports for each send (when the send started, against the
frame's deadline). Every socket connects and binds its playback first; the streams start together once all are
ready (``--connect-s`` after launch), each at a uniformly random instant within ``--start-spread-s`` (default
1 s: N participants pressing start within one second; since that is 40 token intervals, the streams' frames
fall due at independent phases, as real participants' would). The ``shared/aligned`` row (``--aligned``, at the
largest N) starts every stream at the same instant instead: every stream's frames then fall due together, and
the last frame of each burst waits for the N-1 before it whatever the code does; the worst case, not a
participant's. Every frame of every stream counts, the start and close storms included; the connection storm is
kept out of the streams (participants do not arrive 500 at once, and a handshake is not pacing), and a socket
that was not ready by then is reported.

The clients (``--client raw``, benchmarks/ws_client.py) are a minimal asyncio protocol that timestamps each
received chunk and decodes the messages only after the run (``--client websockets``: the websockets library and
``json.loads`` per message, several times the CPU). They run in ``--client-procs`` processes; on a small
machine they share the cores with the server, so they (and this process, which gathers their results) run at a
lower priority: niced (``--client-nice``, default 10) and in the ``SCHED_IDLE`` class (``--no-client-idle`` to
turn it off), which the kernel preempts as soon as the server wakes up, as if the clients ran on another
machine; ``--client-nice 0 --no-client-idle`` lets them compete. With ``--pin`` (the default, on two or more
cores) the server and the bare loop run on the first core and the clients on the others (the header says so):
on a shared machine other jobs may still land on the server's core, so compare with ``--no-pin`` there.
``us/frame`` is the server process's CPU per frame while every stream plays (after the last start, before the
first end: pacing alone, no handshakes; for the bare rows the whole row); ``client`` is the client processes' CPU
per frame (connecting and playing, not the decoding after the run). ``busy`` is how much of the machine's
CPU the run used and ``steal`` how much the hypervisor took: on a shared virtual machine a run with several %
steal shows tens of ms that are not the server's; ``load`` is the machine's 1-minute load average at the end
of the row (other jobs on the same cores).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import shutil
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

import ws_client  # benchmarks/ws_client.py, beside this script

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


SLOW_PIECE_CHARS = 32 * 1024  # the stalled client's frames: its kernel buffers fill within seconds
SLOW_RCVBUF = 4096


def _create_playbacks(n: int, seconds: float, rate: float, pacer: str, slow: int = 0) -> list[tuple[str, bool]]:
    """``n`` live playbacks as (token, stalled): the last ``slow`` of them carry 32 KiB frames for a client that
    stops reading."""
    from playback.core.stream import Piece, Stream
    from playback.services.delivery import playback_create

    interval = 1000.0 / rate
    count = int(seconds * rate)
    stream = Stream(tuple(Piece("tok ", i * interval) for i in range(count)))
    big = Stream(tuple(Piece("x" * SLOW_PIECE_CHARS, i * interval) for i in range(count))) if slow else stream
    return [(playback_create(stream=big if k >= n - slow else stream, mode="live", config={"pacer": pacer}).token,
             k >= n - slow) for k in range(n)]


async def _one_stream(url: str, token: str, start_at: float, stall_s: float | None = None,
                      client: str = "raw") -> dict:
    """One participant's socket; a failed connection is reported (not raised) so the run still prints. A raw
    client's messages are decoded later (``_decoded``), once every stream of its process has ended."""
    try:
        if stall_s is not None:
            return await _play_stalled(url, token, start_at, stall_s)
        if client == "raw":
            return {"raw": await ws_client.play(url, token, start_at)}
        return await _play_one(url, token, start_at)
    except Exception as exc:  # noqa: BLE001 - any failure is one incomplete stream in the table
        return {"t_ms": [], "arrival": [], "server_late": [], "end": {"error": f"{type(exc).__name__}: {exc}"},
                "slow": stall_s is not None}


def _decoded(stream: dict) -> dict:
    return stream["raw"].result() if "raw" in stream else stream


async def _start_when(ws, start_at: float) -> bool:
    """Bind, wait for the common start, start; True when the socket was ready too late."""
    wait = start_at - time.monotonic()  # one clock for all processes: CLOCK_MONOTONIC
    await asyncio.sleep(max(wait, 0.0))
    await ws.send(json.dumps({"type": "start"}))
    return wait < 0


async def _hello(ws, token: str) -> None:
    await ws.send(json.dumps({"type": "hello", "token": token}))
    ready = json.loads(await ws.recv())
    if ready["type"] != "ready":
        raise RuntimeError(f"hello refused: {ready}")


async def _play_one(url: str, token: str, start_at: float) -> dict:
    import websockets

    async with websockets.connect(url, origin="http://127.0.0.1", max_queue=None) as ws:
        await _hello(ws, token)
        late_ready = await _start_when(ws, start_at)
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
    return {"t_ms": t_ms, "arrival": arrival, "server_late": late, "end": msg, "late_ready": late_ready}


async def _play_stalled(url: str, token: str, start_at: float, stall_s: float) -> dict:
    """A client that reads five frames, then nothing for ``stall_s`` (a small receive buffer, a bounded queue:
    the server's writes back up), then everything: did every frame arrive, in order?"""
    import websockets

    host, port = url.split("//", 1)[1].split("/", 1)[0].split(":")
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, SLOW_RCVBUF)
    sock.connect((host, int(port)))
    sock.setblocking(False)
    async with websockets.connect(url, sock=sock, origin="http://127.0.0.1", max_queue=4, max_size=None) as ws:
        await _hello(ws, token)
        late_ready = await _start_when(ws, start_at)
        seqs = [json.loads(await ws.recv())["seq"] for _ in range(5)]
        await asyncio.sleep(stall_s)
        while True:
            msg = json.loads(await ws.recv())
            if msg["type"] != "frame":
                break
            seqs.append(msg["seq"])
    ok = msg.get("reason") == "complete" and seqs == list(range(len(seqs))) and len(seqs) == msg.get("frames")
    return {"t_ms": [], "arrival": [], "server_late": [], "end": msg, "late_ready": late_ready, "slow": True,
            "slow_ok": ok, "slow_frames": len(seqs)}


def _yield_cpu(nice: int, idle: bool) -> None:
    """Lower this process's priority so the load generator does not take the server's cores.

    ``SCHED_IDLE`` matters more than the nice value: a niced process still runs until the scheduler's next tick
    when the server wakes up on its core (several ms of lateness that are the benchmark's, not the server's);
    an idle-class process is preempted at once, as if the clients ran on another machine."""
    if nice:
        os.nice(nice)
    if idle and hasattr(os, "SCHED_IDLE"):
        os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))


def _client_worker(url: str, tokens: list[tuple[str, bool]], spread_s: float, nice: int = 0, start_at: float = 0.0,
                   idle: bool = True, stall_s: float = 0.0, client: str = "raw",
                   cpus: frozenset[int] | None = None) -> list[dict]:
    _yield_cpu(nice, idle)  # the load generator yields the shared cores to the server under test
    if cpus:
        os.sched_setaffinity(0, cpus)

    async def run() -> list[dict]:
        return await asyncio.gather(*(_one_stream(url, t, start_at + random.uniform(0, spread_s),
                                                  stall_s if slow else None, client) for t, slow in tokens))

    streams = asyncio.run(run())
    playing = time.process_time()  # the client's CPU while the streams played (decoding comes after)
    return [_decoded(s) for s in streams] + [{"client_cpu_s": playing}]


def _drift(late: list[float]) -> float:
    k = min(10, len(late))
    return statistics.median(late[-k:]) - statistics.median(late[:k])


def _summarise(streams: list[dict], expected: int) -> dict[str, float]:
    client, server, drifts, complete = [], [], [], 0
    for s in streams:
        if s.get("slow"):
            complete += bool(s.get("slow_ok"))
            continue
        complete += s["end"].get("reason") == "complete" and len(s["t_ms"]) == expected
        if not s["t_ms"]:
            continue
        a0, t0 = s["arrival"][0], s["t_ms"][0]
        late = [(a - a0) - (t - t0) for a, t in zip(s["arrival"], s["t_ms"], strict=True)]
        client.extend(late)
        server.extend(s["server_late"])
        drifts.append(_drift(late))
    nan = float("nan")
    return {
        "complete": complete,
        "c50": _percentile(client, 50) if client else nan, "c99": _percentile(client, 99) if client else nan,
        "cmax": max(client, default=nan),
        "drift": statistics.median(drifts) if drifts else nan, "drift_max": max(drifts, default=nan),
        "s50": _percentile(server, 50) if server else nan, "s99": _percentile(server, 99) if server else nan,
        "smax": max(server, default=nan),
    }


# --- the bare loop: absolute deadlines, no sockets, at the server's priority --------------------------------


async def _bare_stream(t_ms: list[float], start_delay: float) -> list[float]:
    loop = asyncio.get_running_loop()
    await asyncio.sleep(start_delay)
    t0 = loop.time()
    late = []
    for due in t_ms:
        delay = t0 + due / 1000.0 - loop.time()
        if delay > 0:
            await asyncio.sleep(delay)
        late.append((loop.time() - t0) * 1000.0 - due)
    return late


def _bare_run(n: int, seconds: float, rate: float, spread_s: float) -> dict:
    t_ms = [i * 1000.0 / rate for i in range(int(seconds * rate))]

    async def run() -> list[list[float]]:
        return await asyncio.gather(*(_bare_stream(t_ms, random.uniform(0, spread_s)) for _ in range(n)))

    streams = asyncio.run(run())
    server = [x for s in streams for x in s]
    drifts = [_drift(s) for s in streams]
    return {"complete": n, "s50": _percentile(server, 50), "s99": _percentile(server, 99), "smax": max(server),
            "drift": statistics.median(drifts), "drift_max": max(drifts)}


def _bare_server() -> int:
    """``--bare-server``: answer one JSON line of ``_bare_run`` arguments per request, until stdin closes.
    Started before the benchmark lowers its own priority, so it runs at the server's."""
    for line in sys.stdin:
        print(json.dumps(_bare_run(**json.loads(line))), flush=True)
    return 0


class Bare:
    def __init__(self) -> None:
        self.proc = subprocess.Popen([sys.executable, str(Path(__file__).resolve()), "--bare-server"],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, cwd=ROOT)

    def run(self, n: int, seconds: float, rate: float, spread_s: float) -> dict:
        self.proc.stdin.write(json.dumps({"n": n, "seconds": seconds, "rate": rate, "spread_s": spread_s}) + "\n")
        self.proc.stdin.flush()
        return json.loads(self.proc.stdout.readline())

    def close(self) -> None:
        self.proc.stdin.close()
        self.proc.wait(10)


# --- the table ------------------------------------------------------------------------------------------------

HEADER = (f"{'pacer':<15}{'N':>5}{'complete':>10} | {'client p50':>10}{'p99':>8}{'max':>8}"
          f"{'drift':>8}{'drift max':>10} | {'server p50':>10}{'p99':>8}{'max':>8}{'x bare':>8} |"
          f"{'us/frame':>9}{'client':>7} | {'busy':>5}{'steal':>7}{'load':>6}")


def _row(name: str, n: int, r: dict, bare_p99: float | None) -> str:
    ratio = f"{r['s99'] / bare_p99:>8.1f}" if bare_p99 and name != "bare" else f"{'':>8}"
    client = (f"{r['c50']:>10.1f}{r['c99']:>8.1f}{r['cmax']:>8.1f}" if "c50" in r else f"{'-':>10}{'-':>8}{'-':>8}")
    done = f"{r['complete']}/{n}"
    client_us = f"{r['client_us']:>7.1f}" if "client_us" in r else f"{'-':>7}"
    return (f"{name:<15}{n:>5}{done:>10} | {client}{r['drift']:>8.1f}"
            f"{r['drift_max']:>10.1f} | {r['s50']:>10.1f}{r['s99']:>8.1f}{r['smax']:>8.1f}{ratio}"
            f"{r.get('pace_us', r['cpu_us']):>9.1f}{client_us} | {r['busy']:>4.0f}%{r['steal']:>6.1f}%"
            f"{r['load']:>6.2f}")


def _process_cpu_s(pid: int) -> float:
    """User + system CPU seconds of a process so far (/proc/PID/stat)."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            fields = fh.read().rsplit(")", 1)[1].split()
    except OSError:
        return float("nan")
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _measured(fn, *a, pid: int, frames: int) -> tuple[dict, list[dict]]:
    """``fn``'s summary and its streams, with the machine's busy and steal shares, the load average and the
    server's CPU per frame (``us/frame``: process ``pid``'s CPU over the row, handshakes included, divided by
    the ``frames`` the row paces; unlike lateness it hardly depends on what else runs on the machine)."""
    cpu0, proc0 = _cpu_times(), _process_cpu_s(pid)
    out = fn(*a)
    r, streams = out if isinstance(out, tuple) else (out, [])
    r["busy"], r["steal"] = _cpu_share(cpu0, _cpu_times())
    r["cpu_us"] = 1e6 * (_process_cpu_s(pid) - proc0) / max(1, frames)
    r["load"] = os.getloadavg()[0]
    return r, streams


def _cpu_while_playing(pid: int, start: float, stop: float) -> dict:
    """Process ``pid``'s CPU seconds between ``start`` and ``stop`` (monotonic), read from a thread of its own:
    filled in as {"s": wall seconds, "cpu": CPU seconds} once ``stop`` has passed."""
    import threading

    out: dict = {}

    def read() -> None:
        time.sleep(max(0.0, start - time.monotonic()))
        t0, c0 = time.monotonic(), _process_cpu_s(pid)
        time.sleep(max(0.0, stop - time.monotonic()))
        out.update(s=time.monotonic() - t0, cpu=_process_cpu_s(pid) - c0)

    thread = threading.Thread(target=read, daemon=True)
    thread.start()
    out["thread"] = thread
    return out


def _run_streams(url: str, tokens: list[tuple[str, bool]], args, seconds: float,
                 profile: tuple[int, Path] | None = None, spread_s: float | None = None,
                 server_pid: int | None = None) -> tuple[dict, list[dict]]:
    n = len(tokens)
    spread_s = args.start_spread_s if spread_s is None else spread_s
    procs = max(1, min(args.client_procs, n))
    chunks = [tokens[i::procs] for i in range(procs)]
    start_at = time.monotonic() + (args.connect_s if args.connect_s is not None else 2 + n / 100)
    if profile is not None:
        _profile_later(profile[0], profile[1], start_at + spread_s, seconds)
    # the server's CPU while every stream plays (all started, none ended yet): pacing alone, no handshakes
    playing = (_cpu_while_playing(server_pid, start_at + spread_s + 0.2, start_at + seconds - 0.2)
               if server_pid and seconds - spread_s > 1.0 else None)
    stall_s = seconds + spread_s + 2.0  # the stalled client reads again once the others have ended
    with ProcessPoolExecutor(procs) as pool:
        results = pool.map(_client_worker, [url] * procs, chunks, [spread_s] * procs,
                           [args.client_nice] * procs, [start_at] * procs, [args.client_idle] * procs,
                           [stall_s] * procs, [args.client] * procs, [args.client_cpus] * procs)
        streams = [s for chunk in results for s in chunk]
    client_cpu = sum(s.pop("client_cpu_s") for s in streams if "client_cpu_s" in s)
    streams = [s for s in streams if s]
    summary = _summarise(streams, int(seconds * args.rate))
    summary["client_us"] = 1e6 * client_cpu / max(1, n * int(seconds * args.rate))
    if playing is not None:
        playing["thread"].join()
        if playing.get("s"):
            summary["pace_us"] = 1e6 * playing["cpu"] / (n * args.rate * playing["s"])
    return summary, streams


def _normal_priority() -> None:
    """py-spy samples at the server's priority: from this process's ``SCHED_IDLE`` class it would sample only
    while a core is idle, that is mostly while the server waits (root may return to the normal class)."""
    try:
        os.sched_setscheduler(0, os.SCHED_OTHER, os.sched_param(0))
        os.nice(-os.nice(0))
    except (OSError, AttributeError):
        pass


def _py_spy() -> str | None:
    return shutil.which("py-spy", path=os.pathsep.join((str(BIN), os.environ.get("PATH", ""))))


def _profile_later(pid: int, out: Path, at: float, seconds: float) -> None:
    """Sample the server with py-spy while every stream plays (from ``at``, for ``seconds``), in the background."""
    import threading

    def record() -> None:
        subprocess.run([_py_spy() or "py-spy", "record", "--pid", str(pid), "--duration", str(max(1, int(seconds))),
                        "--rate", "100", "--nonblocking", "--idle", "--format", "raw", "--output", str(out)],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False, preexec_fn=_normal_priority)

    threading.Timer(max(0.0, at - time.monotonic()), record).start()


def _frame_name(frame: str) -> str:
    """``send (daphne/ws_protocol.py:251)`` -> ``daphne/ws_protocol.py:send``."""
    name, _, where = frame.partition(" (")
    path = where.rstrip(")").rsplit(":", 1)[0]
    for marker in ("site-packages/", "lib/python3.11/"):
        path = path.split(marker, 1)[-1]
    return f"{path.replace(str(ROOT) + '/', '')}:{name}"


def profile_summary(raw: Path, top: int = 14) -> list[str]:
    """py-spy's collapsed stacks of the event-loop thread as two short tables, in % of the run's wall time
    (idle samples included): the functions the loop was in (inclusive) and the ones it was *at* (self).
    ``select`` is the loop waiting for work, so 100 % minus that is how busy the loop was. The ORM's worker
    threads are counted apart (they hold the interpreter lock only between their database calls)."""
    inclusive: dict[str, int] = {}
    own: dict[str, int] = {}
    total = threads = 0
    for line in raw.read_text(errors="replace").splitlines():
        stack, _, count = line.rpartition(" ")
        if not stack or not count.isdigit():
            continue
        frames = [_frame_name(f) for f in stack.split(";")]
        if not frames[0].endswith(":<module>"):
            threads += int(count) if not any("Condition.wait" in f or "_queue" in f for f in frames[-3:]) else 0
            continue
        k = int(count)
        total += k
        for name in set(frames[1:]):
            inclusive[name] = inclusive.get(name, 0) + k
        own[frames[-1]] = own.get(frames[-1], 0) + k
    if not total:
        return ["  (py-spy recorded no samples)"]
    idle = sum(v for name, v in own.items() if name.endswith(("EpollSelector.select", ":poll")))
    out = [f"  event loop: {total} samples, busy {100 * (total - idle) / total:.0f} % of the time; worker threads "
           f"busy {threads} samples ({100 * threads / total:.0f} %)", "  inclusive %:"]
    out += [f"    {100 * v / total:5.1f}  {name}" for name, v in sorted(inclusive.items(), key=lambda x: -x[1])[:top]]
    out.append("  self %:")
    out += [f"    {100 * v / total:5.1f}  {name}" for name, v in sorted(own.items(), key=lambda x: -x[1])[:top]]
    return out


def _notes(streams: list[dict], log: Path) -> list[str]:
    out = []
    late_ready = sum(bool(s.get("late_ready")) for s in streams)
    if late_ready:
        out.append(f"  {late_ready} socket(s) were not ready when the streams started (raise --connect-s)")
    for s in streams:
        if s.get("slow") and not s.get("slow_ok"):
            out.append(f"  the stalled client got {s.get('slow_frames', 0)} frame(s), end {s['end']}")
    errors = sorted({s["end"]["error"] for s in streams if "error" in s["end"]})
    if errors:
        out.append(f"  {sum('error' in s['end'] for s in streams)} stream(s) failed: {'; '.join(errors)[:300]}")
        out.append("  daphne log (last lines): " + " | ".join(log.read_text(errors="replace").splitlines()[-5:]))
    return out


def _capacity(probe, args, first: int) -> tuple[int, bool]:
    """The largest N with every stream complete and server p99 within the target: grow by ``--capacity-step``
    until a probe fails, then bisect down to ``--capacity-resolution`` streams."""
    def ok(r: dict, n: int) -> bool:
        return r["complete"] == n and r["s99"] <= args.capacity_p99_ms

    good, bad = 0, None
    n = first
    while n <= args.capacity_max:
        r = probe(n)
        if not ok(r, n):
            bad = n
            break
        good, n = n, n + args.capacity_step
    while bad is not None and bad - good > args.capacity_resolution:
        n = (good + bad) // 2
        r = probe(n)
        good, bad = (n, bad) if ok(r, n) else (good, n)
    return good, bad is not None


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", default="200,500", help="concurrent streams, comma-separated")
    parser.add_argument("--seconds", type=float, default=20.0, help="length of each stream")
    parser.add_argument("--rate", type=float, default=40.0, help="tokens per second")
    parser.add_argument("--client-procs", type=int, default=2, help="client processes")
    parser.add_argument("--client-nice", type=int, default=10,
                        help="niceness of the client processes (0: compete with the server for the cores)")
    parser.add_argument("--start-spread-s", type=float, default=1.0,
                        help="the streams start at random within this many seconds of each other")
    parser.add_argument("--aligned", action=argparse.BooleanOptionalAction, default=True,
                        help="one more row at the largest N, shared pacer, with every stream started at the same "
                             "instant (the worst case: every stream's frames fall due together)")
    parser.add_argument("--client", choices=("raw", "websockets"), default="raw",
                        help="raw: a minimal client that timestamps chunks and decodes them after the run "
                             "(benchmarks/ws_client.py); websockets: the websockets library, json per message")
    parser.add_argument("--pin", action=argparse.BooleanOptionalAction, default=True,
                        help="pin the server (and the bare loop) to the first core and the clients to the others "
                             "(when there are at least two)")
    parser.add_argument("--client-idle", action=argparse.BooleanOptionalAction, default=True,
                        help="run the clients in the SCHED_IDLE class (preempted at once by the server)")
    parser.add_argument("--pacers", default="shared,absolute",
                        help="pacers to run, comma-separated: shared (the default for live playback), absolute, naive")
    parser.add_argument("--bare", action=argparse.BooleanOptionalAction, default=True,
                        help="a bare asyncio loop row (absolute deadlines, no sockets) before each N")
    parser.add_argument("--slow-n", default=None,
                        help="N (comma-separated) for the row with one stalled client among N, shared pacer "
                             "(default: the largest --n; 0: none)")
    parser.add_argument("--capacity", action=argparse.BooleanOptionalAction, default=True,
                        help="search the streams-per-process capacity of the shared pacer")
    parser.add_argument("--capacity-p99-ms", type=float, default=5.0, help="the capacity's server p99 target")
    parser.add_argument("--capacity-seconds", type=float, default=10.0, help="stream length of a capacity probe")
    parser.add_argument("--capacity-step", type=int, default=250, help="growth between capacity probes")
    parser.add_argument("--capacity-resolution", type=int, default=50, help="bisect down to this many streams")
    parser.add_argument("--capacity-max", type=int, default=2000, help="the largest N a capacity probe tries")
    parser.add_argument("--connect-s", type=float, default=None,
                        help="seconds for all sockets to connect before the streams start (default 2 + N/100)")
    parser.add_argument("--py-spy", metavar="DIR", default=None,
                        help="profile the Daphne process with py-spy (if installed) during each pacer's row at the "
                             "largest N, write the raw stacks to DIR and print a summary")
    parser.add_argument("--bare-server", action="store_true", help=argparse.SUPPRESS)
    return parser


def _pin(args, server_pids: list[int]) -> str:
    """With ``--pin`` on a machine of two or more cores: the server's process (every thread) and the bare loop on
    the first core, the clients (``args.client_cpus``) and this process on the others. Says so for the header."""
    args.client_cpus = None
    cpus = sorted(os.sched_getaffinity(0))
    if not args.pin or len(cpus) < 2:
        return ""
    server, clients = {cpus[0]}, frozenset(cpus[1:])
    for pid in server_pids:
        for tid in os.listdir(f"/proc/{pid}/task"):
            os.sched_setaffinity(int(tid), server)
    os.sched_setaffinity(0, clients)
    args.client_cpus = clients
    return f" (server pinned to core {cpus[0]}, clients to {','.join(map(str, sorted(clients)))})"


def _raise_fd_limit() -> None:
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard == resource.RLIM_INFINITY or soft < hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard if hard != resource.RLIM_INFINITY else 65536, hard))


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.bare_server:
        return _bare_server()
    sizes = [int(x) for x in args.n.split(",") if x.strip()]
    pacers = [p for p in args.pacers.split(",") if p.strip()]
    slow_sizes = ([int(x) for x in args.slow_n.split(",") if x.strip() and int(x)] if args.slow_n is not None
                  else [max(sizes)])
    _raise_fd_limit()
    if args.py_spy:
        Path(args.py_spy).mkdir(parents=True, exist_ok=True)

    with tempfile.TemporaryDirectory(prefix="pacelab-bench-") as tmp:
        env = _environment(Path(tmp) / "var")
        subprocess.run([sys.executable, "manage.py", "migrate", "--noinput", "-v", "0"], cwd=ROOT, env=env,
                       check=True)
        os.environ.update(env)
        import django

        django.setup()
        from django.db import connections

        plan = []
        for n in sizes:
            plan += [(n, p, p, _create_playbacks(n, args.seconds, args.rate, p)) for p in pacers]
            if n in slow_sizes:
                plan.append((n, "shared", "shared/slow1", _create_playbacks(n, args.seconds, args.rate, "shared", 1)))
            if args.aligned and n == max(sizes):
                plan.append((n, "shared", "shared/aligned", _create_playbacks(n, args.seconds, args.rate, "shared")))
        pool = (_create_playbacks(args.capacity_max, args.capacity_seconds, args.rate, "shared")
                if args.capacity else [])
        connections.close_all()
        port = _free_port()
        log = Path(tmp) / "daphne.log"
        daphne = _start_daphne(port, env, log)
        bare = Bare() if args.bare else None
        pinned = _pin(args, [daphne.pid] + ([bare.proc.pid] if bare else []))
        _yield_cpu(args.client_nice, args.client_idle)  # this process gathers the clients' results: it yields too
        url = f"ws://127.0.0.1:{port}/ws/playback/"
        mode = "PostgreSQL" if os.environ.get("DATABASE_URL") else "embedded (SQLite)"
        print(f"{args.rate:g} tokens/s, {args.seconds:g} s streams, one Daphne process, {mode}, "
              f"{args.client_procs} {args.client} client process(es), {os.cpu_count()} cores{pinned}, load average "
              f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}; lateness in ms")
        print(f"streams start at random within {args.start_spread_s:g} s of each other (uniform"
              f"{', so their frames fall due at independent instants' if args.start_spread_s >= 1 / args.rate else ''})"
              + ("; the shared/aligned row starts them all at the same instant" if args.aligned else ""))
        print(HEADER)
        print("-" * len(HEADER))
        try:
            bare_p99: dict[int, float] = {}
            profiles: list[tuple[str, int, Path]] = []
            for n, _pacer, name, tokens in plan:
                spread = 0.0 if name.endswith("/aligned") else None
                if bare is not None and args.bare and n not in bare_p99:
                    r, _ = _measured(bare.run, n, args.seconds, args.rate, args.start_spread_s,
                                     pid=bare.proc.pid, frames=n * int(args.seconds * args.rate))
                    bare_p99[n] = r["s99"]
                    print(_row("bare", n, r, None), flush=True)
                profile = (daphne.pid, Path(args.py_spy) / f"{name.replace('/', '-')}-{n}.txt") if (
                    args.py_spy and n == max(sizes) and _py_spy()) else None
                r, streams = _measured(_run_streams, url, tokens, args, args.seconds, profile, spread, daphne.pid,
                                       pid=daphne.pid, frames=n * int(args.seconds * args.rate))
                print(_row(name, n, r, bare_p99.get(n)), flush=True)
                for line in _notes(streams, log):
                    print(line)
                if profile is not None:
                    profiles.append((name, n, profile[1]))
            for name, n, raw in profiles:
                time.sleep(1.0)
                print(f"\npy-spy, Daphne process, {name} pacer, N={n} ({raw}):")
                print("\n".join(profile_summary(raw) if raw.exists() else ["  (no profile written)"]))
            if args.capacity:
                _print_capacity(args, sizes, url, pool, log, daphne.pid)
        finally:
            if bare is not None:
                bare.close()
            _stop(daphne)
    return 0


def _print_capacity(args, sizes: list[int], url: str, pool: list[tuple[str, bool]], log: Path,
                    daphne_pid: int) -> None:
    print(f"\ncapacity probes: shared pacer, {args.capacity_seconds:g} s streams, target server p99 <= "
          f"{args.capacity_p99_ms:g} ms with every stream complete")

    def probe(n: int) -> dict:
        r, streams = _measured(_run_streams, url, pool[:n], args, args.capacity_seconds, None, None, daphne_pid,
                               pid=daphne_pid,
                               frames=n * int(args.capacity_seconds * args.rate))
        print(_row("shared", n, r, None), flush=True)
        for line in _notes(streams, log):
            print(line)
        return r

    capacity, bounded = _capacity(probe, args, min(max(sizes), args.capacity_max))
    top = "" if bounded else " or more"
    print(f"capacity at server p99 <= {args.capacity_p99_ms:g} ms: {capacity}{top} streams per process "
          f"({args.rate:g} tokens/s, shared pacer, load average {os.getloadavg()[0]:.2f})")


if __name__ == "__main__":
    raise SystemExit(main())
