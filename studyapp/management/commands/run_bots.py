"""manage.py run_bots STUDY --n N [--url URL] [--json]: simulated participants through the real endpoints.

Without ``--url`` a temporary Daphne is started on a free port with the current settings and database and
stopped afterwards; the answers stored and any duplicates are then counted from the database. With ``--url``
(a server elsewhere) they are counted from the acknowledgements, and the output says so. See docs/bots.md.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from contextlib import contextmanager
from pathlib import Path

import yaml
from django.conf import settings
from django.core.management.base import BaseCommand, CommandError
from django.db import connection
from django.db.models import Count

from studyapp import selectors
from studyapp.bots import observers as bot_models
from studyapp.bots import runner as bots
from studyapp.models import Answer, Session, Study


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _database_url() -> str:
    """The URL of the database this process uses (a test database included), for the server it starts."""
    s = connection.settings_dict
    if s["ENGINE"].endswith("sqlite3"):
        return f"sqlite:///{s['NAME']}"
    if not s["ENGINE"].endswith("postgresql"):
        raise CommandError(f"run_bots can start a server only on PostgreSQL or SQLite, not {s['ENGINE']}")
    return f"postgres://{s['USER']}:{s['PASSWORD']}@{s['HOST'] or '127.0.0.1'}:{s['PORT'] or 5432}/{s['NAME']}"


@contextmanager
def temporary_server(timeout_s: float = 60.0):
    """A Daphne on a free port serving this process's settings and database; yields its base URL."""
    port = _free_port()
    env = dict(os.environ)
    env.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)
    env.update(DATABASE_URL=_database_url(), DJANGO_SETTINGS_MODULE=os.environ.get(
        "DJANGO_SETTINGS_MODULE", "pacelab.settings"), PYTHONUNBUFFERED="1")
    daphne = Path(sys.executable).parent / "daphne"
    cmd = [str(daphne) if daphne.exists() else sys.executable, *([] if daphne.exists() else ["-m", "daphne"]),
           "-b", "127.0.0.1", "-p", str(port), "pacelab.asgi:application"]
    log = tempfile.NamedTemporaryFile(prefix="run_bots-daphne-", suffix=".log", delete=False)  # noqa: SIM115
    proc = subprocess.Popen(cmd, cwd=settings.BASE_DIR, env=env, stdout=log, stderr=subprocess.STDOUT,
                            start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + timeout_s
        while True:
            if proc.poll() is not None:
                raise CommandError(f"the server exited with {proc.returncode}; see {log.name}")
            try:
                with urllib.request.urlopen(f"{url}/healthz", timeout=2) as r:
                    if r.status == 200:
                        break
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise CommandError(f"the server did not answer within {timeout_s:g} s; see {log.name}")
            time.sleep(0.1)
        yield url
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(15)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(5)
        log.close()


def database_counts(study: Study, results: list[bots.BotResult]) -> dict:
    """What the database holds for these bots' sessions: states, answers, duplicates and lost answers."""
    pids = [r.pid for r in results]
    sessions = Session.objects.filter(study=study, panel_pid__in=pids)
    answers = Answer.objects.filter(session__in=sessions)
    acked = {cid for r in results for cid in r.acked}
    found = set(answers.filter(client_id__in=acked).values_list("client_id", flat=True)) if acked else set()
    per_trial = answers.filter(trial__isnull=False).values("trial").annotate(n=Count("id")).filter(n__gt=1).order_by()
    per_key = answers.values("session", "client_id").annotate(n=Count("id")).filter(n__gt=1).order_by()
    return {
        "states": dict(sessions.values_list("state").annotate(n=Count("id")).order_by()),
        "completed": sessions.filter(state=Session.State.COMPLETED).count(),
        "responses_stored": answers.count(),
        # An answer stored twice (one idempotency key or one trial with two rows): must be 0.
        "duplicates": per_trial.count() + per_key.count(),
        "lost": len(acked - found),  # acknowledged but not in the database: must be 0
        "stored_unacked": answers.count() - len(found),  # stored, but the bot never saw the acknowledgement
        "flagged_attention": sum(any(str(f).startswith("failed attention check") for f in flags)
                                 for flags in sessions.values_list("flags", flat=True)),
    }


def load_model(path: str | None) -> bot_models.Population:
    if not path:
        return bot_models.Population()
    try:
        text = Path(path).read_text(encoding="utf-8")
        obj = json.loads(text) if path.endswith(".json") else yaml.safe_load(text)
        return bot_models.Population.from_config(obj or {})
    except OSError as exc:
        raise CommandError(f"--model: {path}: {exc.strerror or exc}") from None
    except (ValueError, yaml.YAMLError) as exc:
        raise CommandError(f"--model: {path}: {exc}") from None


def _check_slots(study: Study, n: int) -> None:
    """Refuse, up front and saying what to do, a run with more bots than the study's quotas let in."""
    slots = selectors.participant_slots(study)
    left = slots["left"]
    if left is None or n <= left:
        return
    quota = (f"its overall quota is {slots['overall']}" if slots["overall"] is not None else
             f"its group quotas are {', '.join(f'{g}: {q}' for g, q in slots['groups'].items())}")
    raise CommandError(
        f"study {study.slug!r} has {left} participant slot(s) left, not the {n} asked for: {quota}, and "
        f"{slots['counted']} session(s) count against it ({slots['completed']} completed, {slots['in_progress']} "
        f"in progress; earlier bot runs included). "
        + (f"Run with --n {left} or fewer, or " if left else "")
        + f"try it on a copy (manage.py copy_study {study.slug} NEW_ID --owner USER, then manage.py study_state "
          f"NEW_ID open), or raise limits.quotas in the study file and load it again (manage.py load_study FILE).")


class Command(BaseCommand):
    help = "Run simulated participants through a study over the real HTTP and websocket endpoints."

    def add_arguments(self, parser):
        parser.add_argument("study", help="the study's slug")
        parser.add_argument("--n", type=int, default=10, help="how many bots (default 10)")
        parser.add_argument("--url", help="a running server's base URL (default: start a temporary Daphne)")
        parser.add_argument("--concurrency", type=int, default=10, help="bots at a time (default 10)")
        parser.add_argument("--seed", type=int, default=0, help="seed of the bots' parameters and answers")
        parser.add_argument("--model", help="observer model file (YAML or JSON; keys in docs/bots.md)")
        parser.add_argument("--attentive", type=float, help="override the model's attentive probability")
        parser.add_argument("--duplicate-rate", type=float, default=0.0,
                            help="share of acknowledged submits deliberately sent again (idempotency check)")
        parser.add_argument("--no-paint", action="store_true", help="send no paint batches")
        parser.add_argument("--language", help="ask for this study language")
        parser.add_argument("--timeout", type=float, default=60.0, help="seconds to wait for any one answer")
        parser.add_argument("--json", action="store_true", help="print a JSON summary")
        parser.add_argument("--truth", action="store_true", help="include every bot's true parameters (--json)")

    def handle(self, *args, **opts):
        slug = opts["study"]
        study = None if opts["url"] else Study.objects.filter(slug=slug).first()
        if not opts["url"] and study is None:
            raise CommandError(f"no study {slug!r} (load it with manage.py load_study)")
        if study is not None and study.state != Study.State.OPEN:
            raise CommandError(f"study {slug!r} is {study.state}; open it first")
        if opts["n"] < 0 or opts["concurrency"] < 1:
            raise CommandError("--n must be >= 0 and --concurrency >= 1")
        if study is not None:
            _check_slots(study, opts["n"])
        population = load_model(opts["model"])
        try:
            population = bot_models.with_overrides(population, attentive=opts["attentive"])
            params = ((study.spec.get("recruitment") or {}).get("params") if study else None) or bots.DEFAULT_PARAMS
            config = bots.RunConfig(url=opts["url"] or "http://placeholder", study=slug, n=opts["n"],
                                    concurrency=opts["concurrency"], seed=opts["seed"], population=population,
                                    duplicate_rate=opts["duplicate_rate"], paint=not opts["no_paint"],
                                    language=opts["language"], params=dict(params), timeout_s=opts["timeout"])
        except ValueError as exc:
            raise CommandError(str(exc)) from None
        if opts["url"]:
            results, wall = bots.run_sync(config)
            out = bots.summary(config, results, wall, truth=opts["truth"])
            out["note"] = "counted from the acknowledgements (--url: the database may be elsewhere)"
        else:
            with temporary_server() as url:
                config.url = url
                results, wall = bots.run_sync(config)
            out = bots.summary(config, results, wall, truth=opts["truth"])
            db = database_counts(study, results)
            out.update(completed=db["completed"], responses_stored=db["responses_stored"],
                       duplicates=db["duplicates"], lost=db["lost"], stored_unacked=db["stored_unacked"],
                       flagged_attention=db["flagged_attention"],
                       db_states=db["states"], counted_from="database")
            out["note"] = "responses_stored, duplicates, lost, stored_unacked and db_states counted from the database"
        if opts["json"]:
            self.stdout.write(json.dumps(out, indent=2, default=str))
        else:
            self.stdout.write(
                f"{out['started']} started, {out['completed']} completed, {out['responses_sent']} answers sent, "
                f"{out['responses_stored']} stored, {out['duplicates']} duplicates, {out['errors']} errors "
                f"in {out['timing']['wall_s']} s ({out['counted_from']})")
            for e in out["error_messages"]:
                self.stderr.write(f"{e['pid']}: {e['error']}")
        if out["errors"]:
            raise CommandError(f"{out['errors']} bot(s) stopped with an error")
