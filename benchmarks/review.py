"""Review: server time of the quality page (and the other review pages) at 100 and 1,000 sessions.

    .venv/bin/python benchmarks/review.py                       # 100 and 1,000 sessions
    .venv/bin/python benchmarks/review.py --sessions 100 300    # other sizes

Each size runs in a child process of its own against a fresh database: a scratch PostgreSQL database next to
``DATABASE_URL`` when it is set (dropped afterwards), else SQLite in a temporary directory. The study is the
demo study. A few sessions are driven through the whole journey with the services (every trial shown, answered
and its paint log recorded, as a browser would), then copied row for row (sessions, trials, answers, playbacks,
paint logs, page visits) up to the size. Server time is measured in-process with Django's test client (request
to response: middleware, view, template), so the network is not in it.

Rows: ``baseline`` is what every load of the page cost before the cache (all quality reports computed from the
tidy trials table, the old page's work); the quality page the first time, with an empty cache (it computes what
fits ``PAGE_BUDGET_S`` and leaves the rest to the background task); the cache fill that task does (once per
session, after the session ended); then the page with the cache filled (the median of ``--repeat`` loads), a
filtered and sorted page, 200 rows per page, one participant's page, and ``payments.csv``. The target: the quality
page under 300 ms at 1,000 sessions.

Above ``--full-up-to`` sessions (default 200) the baseline and the cache fill are not run over every session: both
compute each session's report once, from the same rows, so a sample of ``SAMPLE`` sessions is timed and scaled, and
the copies' cached reports are copied from their templates' (identical data, identical report). The page loads are
always measured in full.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
TEMPLATES = 6  # sessions driven through the journey; the rest are copies of them
TARGET_MS = 300.0
SAMPLE = 50  # sessions whose reports are computed to estimate the baseline above ``--full-up-to``


# --- child: seed, then time -------------------------------------------------------------------------------------


def _drive(study, pid: str, hidden: bool) -> None:
    """One participant through the whole journey, with the paint log a browser sends for every showing."""
    sys.path.insert(0, str(ROOT / "tests" / "studyapp"))
    from journey_driver import step

    from playback.core.protocol import PaintEntry, frames_of
    from playback.models.delivery import PaintReport
    from playback.services.delivery import paint_batch_record
    from studyapp import services
    from studyapp.models import Session, TrialPlayback

    session, _ = services.session_enter(study=study, panel={"participant": pid})
    for _ in range(2000):
        session.refresh_from_db()
        if session.state != Session.State.ACTIVE:
            return
        services.session_touch(session=session)
        step(session)
        for link in TrialPlayback.objects.filter(trial__session=session).select_related("playback"):
            if PaintReport.objects.filter(playback=link.playback).exists():
                continue
            entries = [PaintEntry(seq=f.seq, t_ms=f.t_ms, recv_ms=f.t_ms, paint_ms=f.t_ms + 3.0 * (f.seq % 4),
                                  chars=len(f.text), hidden=hidden)
                       for f in frames_of(link.playback.stream) if f.text]
            paint_batch_record(playback=link.playback, batch=1, entries=entries, clock=None)
    raise RuntimeError("a template session did not finish")


def _copy(study, templates: list[int], n: int) -> None:
    """Copies of the template sessions, row for row, until the study has ``n`` participants."""
    from django.db import transaction

    from playback.models.delivery import PaintReport, Playback
    from studyapp.models import Answer, PageVisit, Session, Trial, TrialPlayback

    def rows(model, **where):
        return list(model.objects.filter(**where).values())

    data = {}
    for t in templates:
        trials = rows(Trial, session_id=t)
        links = rows(TrialPlayback, trial__session_id=t)
        data[t] = {"session": rows(Session, pk=t)[0], "trials": trials, "answers": rows(Answer, session_id=t),
                   "visits": rows(PageVisit, session_id=t), "links": links,
                   "playbacks": rows(Playback, pk__in=[link["playback_id"] for link in links]),
                   "paints": rows(PaintReport, playback_id__in=[link["playback_id"] for link in links])}
    have = Session.objects.filter(study=study, preview=False).count()
    copies: dict[int, list[int]] = {t: [] for t in templates}
    for k in range(have, n):
        d = data[templates[k % len(templates)]]
        with transaction.atomic():
            s = Session.objects.create(**{**d["session"], "id": None, "token": uuid.uuid4().hex,
                                          "panel_pid": f"BENCH{k:05d}"})
            new_trials = Trial.objects.bulk_create([Trial(**{**r, "id": None, "session_id": s.pk})
                                                    for r in d["trials"]])
            trial_map = {old["id"]: new.pk for old, new in zip(d["trials"], new_trials, strict=True)}
            Answer.objects.bulk_create([Answer(**{**r, "id": None, "session_id": s.pk,
                                                  "trial_id": trial_map.get(r["trial_id"])}) for r in d["answers"]])
            PageVisit.objects.bulk_create([PageVisit(**{**r, "id": None, "session_id": s.pk}) for r in d["visits"]])
            new_pb = Playback.objects.bulk_create([Playback(**{**r, "id": None, "token": uuid.uuid4().hex})
                                                   for r in d["playbacks"]])
            pb_map = {old["id"]: new.pk for old, new in zip(d["playbacks"], new_pb, strict=True)}
            TrialPlayback.objects.bulk_create([TrialPlayback(**{**r, "id": None, "trial_id": trial_map[r["trial_id"]],
                                                                "playback_id": pb_map[r["playback_id"]]})
                                               for r in d["links"]])
            PaintReport.objects.bulk_create([PaintReport(**{**r, "id": None, "playback_id": pb_map[r["playback_id"]]})
                                             for r in d["paints"]])
            copies[d["session"]["id"]].append(s.pk)
    for t, ids in copies.items():  # ``started_at`` is set on create: give the copies their template's times
        Session.objects.filter(pk__in=ids).update(started_at=data[t]["session"]["started_at"],
                                                  finished_at=data[t]["session"]["finished_at"])


def _copy_reports(study, templates: list[int]) -> None:
    """Every copy's cached report, taken from its template's (the rows are the same, so is the report); what
    ``quality_refresh`` would store, without computing a thousand identical reports on a shared machine."""
    from dashboard.models import QualitySummary
    from dashboard.selectors import review as selectors_review
    from studyapp.models import Session

    sessions = list(Session.objects.filter(study=study).values(*selectors_review.SESSION_FIELDS))
    by_id = {s["id"]: s for s in sessions}
    reports = selectors_review.summaries(study, [by_id[t] for t in templates])
    order = {t: i for i, t in enumerate(templates)}
    copies = [s for s in sessions if s["id"] not in order]
    now = QualitySummary.objects.filter(session_id=templates[0]).values_list("computed_at", flat=True)[0]
    rows = []
    for k, s in enumerate(sorted(copies, key=lambda s: s["id"])):
        template = templates[(k + len(templates)) % len(templates)]
        data = {**reports[template], "participant": s["id"]}
        rows.append(QualitySummary(session_id=s["id"], key=selectors_review._key(study, s), final=True, data=data,
                                   computed_at=now))
    QualitySummary.objects.bulk_create(rows, update_conflicts=True, unique_fields=["session"],
                                       update_fields=["key", "final", "data", "computed_at"], batch_size=500)


def _ms(fn) -> float:
    t0 = time.perf_counter()
    fn()
    return (time.perf_counter() - t0) * 1000.0


def _cpu_ms(fn) -> float:
    """The CPU time the request took in this process (Django, the view, the template; not the database
    server's): on a shared machine the wall clock also counts the time other processes had the cores."""
    t0 = time.process_time()
    fn()
    return (time.process_time() - t0) * 1000.0


def child(n: int, repeat: int, out: Path, full_up_to: int) -> None:
    import django

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "pacelab.settings")
    django.setup()
    from datetime import timedelta

    from django.contrib.auth import get_user_model
    from django.db.models import F
    from django.test import Client

    from dashboard import tasks
    from dashboard.models import QualitySummary
    from dashboard.selectors import review as selectors_review
    from studyapp import services
    from studyapp.design import studyfile
    from studyapp.models import Session

    user = get_user_model().objects.create_user("bench", password="bench-only-password")
    study, _ = services.study_load(doc=studyfile.load_study(studyfile.demo_study_path()), owner=user)
    services.study_set_state(study=study, state="open")
    study.refresh_from_db()
    t0 = time.perf_counter()
    for i in range(TEMPLATES):
        _drive(study, f"TEMPLATE{i}", hidden=i % 3 == 2)
    templates = list(Session.objects.filter(study=study).order_by("pk").values_list("pk", flat=True))
    _copy(study, templates, n)
    seed_s = time.perf_counter() - t0
    # reviewed an hour after the sessions ended, as a study is (a report is final once the grace period passed)
    hour = timedelta(hours=1)
    Session.objects.filter(study=study).update(started_at=F("started_at") - hour, finished_at=F("finished_at") - hour)
    client = Client(HTTP_HOST="localhost")
    tasks.quality_refresh_soon = lambda study_id: False  # the benchmark fills the cache itself, timed
    client.force_login(user)
    base = f"/dashboard/{study.slug}"

    def get(path: str) -> None:
        response = client.get(base + path)
        assert response.status_code == 200, (path, response.status_code)

    ids = list(Session.objects.filter(study=study).order_by("pk").values_list("pk", flat=True))
    measured = n <= full_up_to
    if measured:
        baseline = _ms(lambda: selectors_review._compute(study, ids))
    else:  # computing every report costs the same per session: time a sample, scale it
        sample = ids[:SAMPLE]
        baseline = _ms(lambda: selectors_review._compute(study, sample)) * n / len(sample)
    QualitySummary.objects.all().delete()
    first = _ms(lambda: get("/quality/"))  # computes what fits its budget, leaves the rest to the task
    if measured:
        fill = _ms(lambda: selectors_review.quality_refresh(study))  # what dashboard.tasks.quality_refresh does
    else:
        fill = baseline  # the same work, once per session; the copies' reports are their templates' reports
        _copy_reports(study, templates)
    assert QualitySummary.objects.filter(final=True).count() == n
    rows = {"sessions": n, "seed_s": round(seed_s, 1), "baseline_ms": round(baseline, 1),
            "first_ms": round(first, 1), "fill_s": round(fill / 1000, 1), "measured": measured}
    for name, path in (("warm_ms", "/quality/"), ("filtered_sorted_ms", "/quality/?decided=undecided&sort=-minutes"),
                       ("rows_200_ms", "/quality/?per_page=200"),
                       ("participant_ms", f"/participant/?id={templates[0]}"), ("payments_csv_ms", "/payments.csv")):
        get(path)
        rows[name] = round(statistics.median(_ms(lambda p=path: get(p)) for _ in range(repeat)), 1)
        if name == "warm_ms":
            rows["warm_cpu_ms"] = round(statistics.median(_cpu_ms(lambda p=path: get(p)) for _ in range(repeat)), 1)
            rows["load"] = round(os.getloadavg()[0], 1)
    out.write_text(json.dumps(rows))


# --- parent -------------------------------------------------------------------------------------------------------


def _scratch_db(url: str) -> tuple[str, str]:
    import psycopg

    name = f"pacelab_review_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    return urlunsplit(urlsplit(url)._replace(path=f"/{name}")), name


def _drop_db(url: str, name: str) -> None:
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def _run(n: int, repeat: int, full_up_to: int) -> dict:
    env = {k: v for k, v in os.environ.items()}
    env.update(DJANGO_SETTINGS_MODULE="pacelab.settings", PYTHONUNBUFFERED="1", LOG_LEVEL="ERROR",
               SECRET_KEY=env.get("SECRET_KEY", "review-benchmark-only"))
    pg = env.get("DATABASE_URL", "")
    scratch = None
    with tempfile.TemporaryDirectory() as tmp:
        env["PACELAB_VAR_DIR"] = tmp
        if pg.startswith("postgres"):
            env["DATABASE_URL"], scratch = _scratch_db(pg)
        else:
            env.pop("DATABASE_URL", None)
            env.pop("REDIS_URL", None)
        try:
            subprocess.run([sys.executable, "manage.py", "migrate", "--noinput", "-v", "0"], cwd=ROOT, env=env,
                           check=True)
            out = Path(tmp) / "row.json"
            subprocess.run([sys.executable, __file__, "--child", str(n), "--repeat", str(repeat), "--out", str(out),
                            "--full-up-to", str(full_up_to)], cwd=ROOT, env=env, check=True)
            row = json.loads(out.read_text())
        finally:
            if scratch:
                _drop_db(pg, scratch)
    row["database"] = "postgresql" if scratch else "sqlite"
    return row


def _table(rows: list[dict]) -> str:
    cols = [("sessions", "sessions"), ("database", "db"), ("baseline_ms", "baseline ms"),
            ("first_ms", "first load ms"), ("fill_s", "cache fill s"), ("warm_ms", "quality ms"),
            ("warm_cpu_ms", "quality cpu ms"),
            ("filtered_sorted_ms", "filter+sort ms"),
            ("rows_200_ms", "200 rows ms"), ("participant_ms", "participant ms"),
            ("payments_csv_ms", "payments.csv ms"),
            ("ratio", "quality/baseline"), ("measured", "baseline"), ("load", "load avg"),
            ("seed_s", "seed s")]
    shown = [{**r, "measured": "measured" if r.get("measured") else f"est. from {SAMPLE}"} for r in rows]
    cells = [[h for _, h in cols]] + [[str(r.get(k)) for k, _ in cols] for r in shown]
    widths = [max(len(c[i]) for c in cells) for i in range(len(cols))]
    lines = ["  ".join(c.rjust(w) for c, w in zip(row, widths, strict=True)) for row in cells]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sessions", type=int, nargs="+", default=[100, 1000])
    ap.add_argument("--repeat", type=int, default=5, help="loads per warm measurement (the median is shown)")
    ap.add_argument("--full-up-to", type=int, default=200,
                    help="above this many sessions the baseline and the cache fill are estimated from a sample of "
                         f"{SAMPLE} sessions (the same work per session), and the copies' reports copied")
    ap.add_argument("--json", action="store_true", help="print the rows as JSON after the table")
    ap.add_argument("--child", type=int, help=argparse.SUPPRESS)
    ap.add_argument("--out", type=Path, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        child(args.child, args.repeat, args.out, args.full_up_to)
        return 0
    rows = []
    for n in args.sessions:
        row = _run(n, args.repeat, args.full_up_to)
        row["ratio"] = round(row["warm_ms"] / row["baseline_ms"], 3) if row["baseline_ms"] else None
        rows.append(row)
    print(_table(rows))
    biggest = max(rows, key=lambda r: r["sessions"])
    ok = biggest["warm_ms"] < TARGET_MS
    print(f"\ntarget: the quality page under {TARGET_MS:.0f} ms at {biggest['sessions']} sessions: "
          f"{biggest['warm_ms']} ms, {'met' if ok else 'NOT met'}")
    if args.json:
        print(json.dumps(rows, indent=2))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
