"""Load: N bot participants complete a short study at once, production mode (2 Daphne processes, PostgreSQL,
Redis) side by side with the embedded mode (1 Daphne, SQLite, in-memory channel layer), in the same run.

    .venv/bin/python benchmarks/load.py                     # 300 participants
    .venv/bin/python benchmarks/load.py --participants 20   # smoke test

Each mode runs in a child process of its own (Django reads its settings once). Production uses a scratch
database created next to ``DATABASE_URL`` (dropped afterwards) and ``REDIS_URL`` (default redis://127.0.0.1:6379/0);
without ``DATABASE_URL`` only the embedded mode runs. The study: consent, environment, instructions, two
acceptability trials of a 40-character stream (delivery prefetch or live, between subjects), debrief: 6 answers per
participant. Measured: answers acknowledged per second of wall time, acknowledgement latency (submit round trip)
p50/p99, live pacing lateness p50/p99/max (the ``late_ms`` the server reports in every live frame), and, counted
from the database, answers lost (acknowledged but not stored) and duplicated (stored more than once, or stored
but never acknowledged). Lost and duplicated must be 0; the command exits 1 otherwise.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "support"))


def study_doc() -> dict:
    q = {"en": "OK?", "zh-hans": "可以吗？"}
    return {
        "version": 1, "id": "load-bench", "title": {"en": "Load", "zh-hans": "负载"}, "languages": ["en", "zh-hans"],
        "texts": {"consent": {"en": "Consent?", "zh-hans": "同意吗？"}, "instructions": "Watch.",
                  "debrief": {"en": "Thanks", "zh-hans": "谢谢"}},
        "stimuli": {"coffee": {"text": "en-chat-coffee", "max_chars": 40, "tokenizer": "char", "ttft_ms": 300,
                               "rate": 40, "seed": 1}},
        "factors": [{"name": "rate", "sets": "rate", "levels": [40, 80]},
                    {"name": "delivery", "sets": "delivery", "assignment": "between", "levels": ["prefetch", "live"]}],
        "blocks": [{"id": "accept", "type": "main", "stimulus": "coffee",
                    "design": {"factorial": ["rate", "delivery"]}, "task": {"type": "acceptability", "question": q}}],
    }


def _pct(values: list[float], q: float) -> float | None:
    if not values:
        return None
    from playback.core.fidelity import percentile

    return round(percentile(values, q), 1)


# --- one mode, in a child process ---------------------------------------------------------------------------


def _bots_run(urls: list[str], slug: str, n: int) -> tuple[list, list[float], float]:
    """n bots at once, spread over the servers; returns results, every live frame's late_ms, wall seconds."""
    from studyapp.bots import observers as bot_models
    from studyapp.bots import runner as bots

    late: list[float] = []

    class Recording(bots.Participant):
        async def _recv(self, ws):
            msg = await super()._recv(ws)
            if msg.get("type") == "frame":
                late.append(float(msg["late_ms"]))
            return msg

    run_id = uuid.uuid4().hex[:8]
    population = bot_models.Population(attentive=1.0)
    models = bot_models.population_bots(population, n, 7)

    async def main() -> list:
        configs = [bots.RunConfig(url=u, study=slug, n=n, concurrency=n, seed=7, run_id=run_id, timeout_s=120,
                                  retries=8) for u in urls]
        return await asyncio.gather(*(Recording(configs[i % len(urls)], bots.bot_pid(run_id, i), b).run()
                                      for i, b in enumerate(models)))

    t0 = time.perf_counter()
    results = asyncio.run(main())
    return results, late, time.perf_counter() - t0


def child(mode: str, n: int, out: Path) -> None:
    import django

    django.setup()
    from collections import Counter

    from django.contrib.auth import get_user_model
    from procs import free_port, start_daphne, stop

    from studyapp import services
    from studyapp.models import Answer, Session

    owner, _ = get_user_model().objects.get_or_create(username="load-owner")
    study, _ = services.study_load(doc=study_doc(), owner=owner)
    services.study_set_state(study=study, state="open")
    env = dict(os.environ)
    env["CONN_MAX_AGE"] = "0"  # as the integration tests: per-request connections
    env.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)
    logs = Path(tempfile.mkdtemp(prefix=f"pacelab-load-{mode}-"))
    procs, urls = [], []
    for i in range(2 if mode == "production" else 1):
        port = free_port()
        procs.append(start_daphne(port, env, logs / f"daphne-{i}.log"))
        urls.append(f"http://127.0.0.1:{port}")
    try:
        results, late, wall = _bots_run(urls, study.slug, n)
    finally:
        for p in procs:
            stop(p)
    sessions = {s.panel_pid: s.pk for s in Session.objects.filter(study=study)}
    stored = Counter(Answer.objects.filter(session__study=study).values_list("session_id", "client_id"))
    acked = {(sessions.get(r.pid), cid) for r in results for cid in r.acked}
    lost = len(acked - set(stored))
    duplicated = sum(c - 1 for c in stored.values()) + len(set(stored) - acked)
    submit_ms = [x for r in results for x in r.submit_ms]
    errors = [r.error for r in results if r.error]
    row = {"mode": mode, "servers": len(urls), "participants": n,
           "completed": sum(1 for r in results if r.state == "completed"), "errors": len(errors),
           "first_error": errors[0] if errors else "", "answers": len(acked), "wall_s": round(wall, 1),
           "answers_per_s": round(len(acked) / wall, 1), "ack_p50_ms": _pct(submit_ms, 50),
           "ack_p99_ms": _pct(submit_ms, 99), "live_frames": len(late), "late_p50_ms": _pct(late, 50),
           "late_p99_ms": _pct(late, 99), "late_max_ms": round(max(late), 1) if late else None,
           "lost": lost, "duplicated": duplicated, "retries": sum(r.retries for r in results), "logs": str(logs)}
    out.write_text(json.dumps(row))


# --- the parent: databases, children, the table ---------------------------------------------------------------


def _scratch_db(url: str) -> tuple[str, str]:
    """Create a scratch database on the server of ``url``; returns (its URL, its name)."""
    import psycopg

    parts = urlsplit(url)
    name = f"pacelab_load_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    return urlunsplit(parts._replace(path=f"/{name}")), name


def _drop_db(url: str, name: str) -> None:
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def _run_mode(mode: str, n: int, env: dict[str, str]) -> dict:
    subprocess.run([sys.executable, "manage.py", "migrate", "--noinput", "-v", "0"], cwd=ROOT, env=env, check=True)
    out = Path(tempfile.mkstemp(suffix=".json")[1])
    subprocess.run([sys.executable, __file__, "--child", mode, "--participants", str(n), "--out", str(out)],
                   cwd=ROOT, env=env, check=True)
    return json.loads(out.read_text())


def _table(rows: list[dict]) -> str:
    cols = [("mode", "mode"), ("servers", "servers"), ("participants", "bots"), ("completed", "done"),
            ("errors", "errors"), ("answers", "answers"), ("wall_s", "wall s"), ("answers_per_s", "answers/s"),
            ("ack_p50_ms", "ack p50 ms"), ("ack_p99_ms", "ack p99 ms"), ("live_frames", "live frames"),
            ("late_p50_ms", "late p50 ms"), ("late_p99_ms", "late p99 ms"), ("late_max_ms", "late max ms"),
            ("lost", "lost"), ("duplicated", "dup")]
    cells = [[h for _, h in cols]] + [[str(r.get(k)) for k, _ in cols] for r in rows]
    widths = [max(len(c[i]) for c in cells) for i in range(len(cols))]
    lines = ["  ".join(c.rjust(w) for c, w in zip(row, widths)) for row in cells]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--participants", type=int, default=300)
    ap.add_argument("--json", action="store_true", help="print the rows as JSON after the table")
    ap.add_argument("--child", choices=["production", "embedded"], help=argparse.SUPPRESS)
    ap.add_argument("--out", type=Path, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        child(args.child, args.participants, args.out)
        return 0

    base = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL")}
    base.update(DJANGO_SETTINGS_MODULE="pacelab.settings", PYTHONUNBUFFERED="1", SERVE_STATIC="1",
                SECRET_KEY=os.environ.get("SECRET_KEY", "load-benchmark-only"), LOG_LEVEL="ERROR")
    rows = []
    pg = os.environ.get("DATABASE_URL", "")
    if pg.startswith("postgres"):
        url, name = _scratch_db(pg)
        try:
            rows.append(_run_mode("production", args.participants, base | {
                "DATABASE_URL": url, "REDIS_URL": os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/0")}))
        finally:
            _drop_db(pg, name)
    with tempfile.TemporaryDirectory(prefix="pacelab-load-embedded-") as var:
        rows.append(_run_mode("embedded", args.participants, base | {"PACELAB_VAR_DIR": var}))
    print(f"\nLoad: {args.participants} bot participants at once, 6 answers each "
          f"(consent, environment, instructions, 2 trials prefetch|live, debrief)\n")
    print(_table(rows))
    if not pg.startswith("postgres"):
        print("\n(DATABASE_URL not set: production mode not run)")
    if args.json:
        print(json.dumps(rows, indent=1))
    bad = [r for r in rows if r["lost"] or r["duplicated"] or r["errors"] or r["completed"] != r["participants"]]
    for r in bad:
        print(f"\nFAILED in {r['mode']}: lost {r['lost']}, duplicated {r['duplicated']}, errors {r['errors']} "
              f"({r['first_error']}); logs in {r['logs']}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
