"""Writes of the analysis layer: requesting, running and cancelling analysis runs.

A run is idempotent (STYLE.md: Celery redelivers unacknowledged tasks): ``analysis_run`` returns a finished run as
it is; an attempt takes a fresh *lease* on the row when it starts, writes its files into a private directory and,
under a row lock, stores results and moves the files into place only if it still holds the lease. A task
redelivered after its worker died takes the lease over and starts again; the dead attempt can never store. So a
run ends with exactly one results value and one file set, under ``VAR_DIR/analysis/<run id>/``.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import traceback
import uuid
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path

from django.conf import settings
from django.db import IntegrityError, InterfaceError, OperationalError, transaction
from django.utils import timezone

from analysis import events, messages, snapshot
from analysis.models import ABANDONED_AFTER, AnalysisFile, AnalysisRun
from analysis.stats import pipeline
from pacelab.tasks import enqueue
from studyapp.models import Study

log = logging.getLogger("pacelab")
ACTIVE = (AnalysisRun.State.QUEUED, AnalysisRun.State.RUNNING)
RUN_ANALYSIS = "analysis.tasks.run_analysis"  # named, not imported: the tasks module imports this one
STALE_AFTER = timedelta(seconds=60)


def analysis_root() -> Path:
    return Path(settings.VAR_DIR) / "analysis"


def run_dir(run: AnalysisRun | int) -> Path:
    """Where a finished run's files live: ``report.html``, ``results.json``, ``methods.txt``, ``figures/``."""
    return analysis_root() / str(run if isinstance(run, int) else run.pk)


def report_path(run: AnalysisRun) -> Path:
    return run_dir(run) / "report.html"


def analysis_request(*, study: Study, by=None, force: bool = False, enqueue_task: bool = True,
                     language: str = "") -> AnalysisRun:
    """The run for the study's current data: a stored or running one, else a new run enqueued on commit.

    ``force`` starts a new run even when a finished one exists for this data (a run already under way is
    returned). ``enqueue_task=False`` leaves running it to the caller (``manage.py analyze --inline``).
    ``language`` is the HTML report's (the requester's); a stored run keeps the language it was made in.
    """
    version = snapshot.data_version(study)
    with transaction.atomic():
        Study.objects.select_for_update().filter(pk=study.pk).first()  # one request at a time per study
        runs = AnalysisRun.objects.filter(study=study, data_version=version)
        for stuck in runs.filter(state=AnalysisRun.State.RUNNING).select_for_update():
            if stuck.abandoned():  # its process died with no redelivery to come: record that, and start afresh
                _abandon(stuck, AnalysisRun.State.FAILED)
        existing = runs.filter(state__in=ACTIVE if force else (*ACTIVE, AnalysisRun.State.DONE)).order_by("-id")
        run = existing.first()
        if run is not None:
            return run
        run = AnalysisRun.objects.create(study=study, data_version=version, requested_by=by, language=language)
        if enqueue_task:
            transaction.on_commit(lambda: enqueue(RUN_ANALYSIS, run.pk))
    return run


def analysis_cancel(*, run: AnalysisRun) -> AnalysisRun:
    """Cancel a run: a queued run at once, a running one at its next step (the pipeline checks between steps)."""
    with transaction.atomic():
        row = AnalysisRun.objects.select_for_update().get(pk=run.pk)
        if row.state == AnalysisRun.State.QUEUED:
            row.state, row.finished_at = AnalysisRun.State.CANCELLED, timezone.now()
        elif row.abandoned():  # nothing is left to read the request: cancel it here
            _abandon(row, AnalysisRun.State.CANCELLED)
            return row
        elif row.state == AnalysisRun.State.RUNNING:
            row.cancel_requested = True
        row.save(update_fields=["state", "finished_at", "cancel_requested"])
        events.analysis_progress(row.pk, state=row.state, stage=row.stage, percent=row.percent)
    return row


def _abandon(run: AnalysisRun, state: str) -> None:
    """End a running run whose attempt has died (``AnalysisRun.abandoned``); the caller holds its row lock."""
    run.state, run.finished_at, run.lease = state, timezone.now(), ""
    run.error = messages.abandoned(int(ABANDONED_AFTER.total_seconds() // 60))
    run.save(update_fields=["state", "finished_at", "lease", "error"])
    events.analysis_progress(run.pk, state=run.state, stage=run.stage, percent=run.percent)


def analysis_recover_lost(now=None) -> list[int]:
    """Send again every running run whose worker was lost (silent for ``ANALYSIS_LOST_AFTER_S``); the ids sent.

    The run is marked (stage ``lost``: "worker lost, restarting" on the dashboard) and its heartbeat set to now
    in one conditional update, so two sweeps at once send it once, and the next attempt has another
    ``ANALYSIS_LOST_AFTER_S`` to take it over before it is sent again. The dead attempt cannot store anything:
    the next attempt takes a new lease. Exactly-once results stay with the lease (``_finish``).
    """
    from django.db.models import Q

    from analysis.models import LOST_STAGE, lost_after

    now = now or timezone.now()
    cutoff = now - lost_after()
    silent = Q(heartbeat_at__lt=cutoff) | Q(heartbeat_at__isnull=True, started_at__lt=cutoff)
    sent = []
    for run in AnalysisRun.objects.filter(silent, state=AnalysisRun.State.RUNNING):
        with transaction.atomic():
            marked = AnalysisRun.objects.filter(silent, pk=run.pk, state=AnalysisRun.State.RUNNING,
                                                lease=run.lease).update(stage=LOST_STAGE, heartbeat_at=now)
            if marked:
                events.analysis_progress(run.pk, state=AnalysisRun.State.RUNNING, stage=LOST_STAGE,
                                         percent=run.percent)
        if marked:
            log.warning("analysis run %s: its worker was lost (silent since %s); sending it again",
                        run.pk, run.last_sign_of_life())
            if enqueue(RUN_ANALYSIS, run.pk):
                sent.append(run.pk)
    return sent


def _test_delay() -> float:
    value = getattr(settings, "PACELAB_ANALYSIS_TEST_DELAY", None) or os.environ.get("PACELAB_ANALYSIS_TEST_DELAY")
    return float(value or 0.0)


def _start(run_id: int, lease: str) -> AnalysisRun | None:
    """Take the run for this attempt; None when it is finished (returned as is by the caller)."""
    with transaction.atomic():
        run = AnalysisRun.objects.select_for_update().select_related("study").get(pk=run_id)
        if run.finished:
            return None
        if run.cancel_requested:
            run.state, run.finished_at = AnalysisRun.State.CANCELLED, timezone.now()
            run.save(update_fields=["state", "finished_at"])
            return None
        if run.state == AnalysisRun.State.RUNNING:
            log.warning("analysis run %s: attempt %s was interrupted; starting again", run.pk, run.attempts)
        run.state, run.lease, run.attempts = AnalysisRun.State.RUNNING, lease, run.attempts + 1
        run.stage, run.percent, run.started_at, run.error = "loading", 0.0, timezone.now(), ""
        run.heartbeat_at = run.started_at
        run.save(update_fields=["state", "lease", "attempts", "stage", "percent", "started_at", "error",
                                "heartbeat_at"])
        events.analysis_progress(run.pk, state=run.state, stage=run.stage, percent=0.0)
    return run


def _finish(run_id: int, lease: str, state: str, *, results=None, error: str = "", staged: Path | None = None,
            files: list[tuple[str, str]] = ()) -> AnalysisRun:
    """Store the outcome if this attempt still holds the lease; move its files into place under the same lock."""
    with transaction.atomic():
        run = AnalysisRun.objects.select_for_update().get(pk=run_id)
        if run.lease != lease or run.state != AnalysisRun.State.RUNNING:
            if staged is not None:
                shutil.rmtree(staged, ignore_errors=True)
            return run
        if state == AnalysisRun.State.DONE and run.cancel_requested:
            state = AnalysisRun.State.CANCELLED
        if state == AnalysisRun.State.DONE and staged is not None:
            final = run_dir(run)
            if final.exists():  # an attempt that died after moving its files but before committing
                shutil.rmtree(final)
            os.replace(staged, final)
            AnalysisFile.objects.filter(run=run).delete()
            AnalysisFile.objects.bulk_create([
                AnalysisFile(run=run, name=name, kind=kind, size=(final / name).stat().st_size) for name, kind in files
            ])
        elif staged is not None:
            shutil.rmtree(staged, ignore_errors=True)
        run.state, run.finished_at, run.error = state, timezone.now(), error
        run.results = results if state == AnalysisRun.State.DONE else None
        if state == AnalysisRun.State.DONE:
            run.stage, run.percent = "done", 100.0
        run.save(update_fields=["state", "finished_at", "error", "results", "stage", "percent"])
        events.analysis_progress(run.pk, state=run.state, stage=run.stage, percent=run.percent)
    return run


def write_outputs(*, run: AnalysisRun, results: dict, out: Path, on_figure=None) -> list[tuple[str, str]]:
    """Figures (SVG, PNG, PDF), ``results.json``, ``methods.txt`` and ``report.html`` into ``out``."""
    from analysis import report_page
    from analysis.reporting import figures
    from analysis.reporting import methods as report

    out.mkdir(parents=True, exist_ok=True)
    made = figures.render_all(results, out / "figures", on_figure=on_figure)
    files: list[tuple[str, str]] = []
    shown = []
    for fig in made:
        files += [(f"figures/{f}", "figure") for f in fig["files"]]
        svg = next((f for f in fig["files"] if f.endswith(".svg")), None)
        shown.append(fig | {"svg": (out / "figures" / svg).read_text() if svg else ""})
    spec = run.study.spec
    methods = report.methods_paragraph(spec, results)
    (out / "methods.txt").write_text(methods + "\n", encoding="utf-8")
    (out / "results.json").write_text(json.dumps(results, indent=1, ensure_ascii=False), encoding="utf-8")
    meta = {"id": run.pk, "data_version": run.data_version, "finished_at": timezone.now().isoformat(timespec="seconds")}
    html = report_page.render_html(spec=spec, results=results, figures=shown, methods=methods, run=meta,
                              language=run.language or settings.LANGUAGE_CODE)
    (out / "report.html").write_text(html, encoding="utf-8")
    return files + [("methods.txt", "methods"), ("results.json", "table"), ("report.html", "report")]


def analysis_run(*, run_id: int, echo: Callable[[str, float], None] | None = None,
                 options: pipeline.Options | None = None, retry_db_errors: bool = False) -> AnalysisRun:
    """Run a queued run (the task body). Idempotent: a run already done, failed or cancelled is returned as is.

    ``retry_db_errors`` (the Celery task): a lost database connection is raised, not recorded as the run's
    failure, so the task is retried and its next attempt takes the run over."""
    from analysis.heartbeat import Heartbeat

    lease = uuid.uuid4().hex
    run = _start(run_id, lease)
    if run is None:
        return AnalysisRun.objects.get(pk=run_id)
    heartbeat = Heartbeat(run_id, lease, settings.ANALYSIS_HEARTBEAT_S)
    heartbeat.start()
    try:
        return _attempt(run, lease, echo=echo, options=options, retry_db_errors=retry_db_errors)
    finally:
        heartbeat.stop()


def _attempt(run: AnalysisRun, lease: str, *, echo, options, retry_db_errors: bool) -> AnalysisRun:
    """One attempt at a run this attempt holds the lease of (``analysis_run``'s body, under its heartbeat)."""
    from analysis.progress import Reporter

    run_id = run.pk
    root = analysis_root()
    staged = root / f".{run_id}-{lease}"
    try:
        root.mkdir(parents=True, exist_ok=True)
        for stale in root.glob(f".{run_id}-*"):  # files of attempts that died
            if stale != staged:
                shutil.rmtree(stale, ignore_errors=True)
        reporter = Reporter(run_id, lease, delay=_test_delay(), echo=echo)
        trials, participants, version = snapshot.read(run.study)
        if version != run.data_version:  # answers came in while it waited: label the run with what it reads
            superseded = _relabel(run, lease, version)
            if superseded is not None:
                return _finish(run_id, lease, AnalysisRun.State.CANCELLED, staged=staged,
                               error=messages.superseded(superseded))
        def progress(stage: str, percent: float) -> None:  # the pipeline is 95 %, the files the rest
            reporter("figures" if stage == "done" else stage, percent * 0.95)

        results = pipeline.run(trials, participants, spec=run.study.spec, options=options, progress=progress,
                               cancelled=reporter.cancelled)
        files = write_outputs(run=run, results=results, out=staged,
                              on_figure=lambda i: reporter.cancelled() and _raise_cancelled())
    except (pipeline.Cancelled, KeyboardInterrupt) as exc:
        out = _finish(run_id, lease, AnalysisRun.State.CANCELLED, staged=staged)
        if isinstance(exc, KeyboardInterrupt):
            raise
        return out
    except (OperationalError, InterfaceError):
        if retry_db_errors:
            log.warning("analysis run %s: the database went away; the task will be retried", run_id)
            raise
        log.exception("analysis run %s failed", run_id)
        return _finish(run_id, lease, AnalysisRun.State.FAILED, error=messages.DATABASE_LOST,
                       staged=staged)
    except Exception as exc:  # noqa: BLE001 - any failure is recorded on the run, with its reason
        log.exception("analysis run %s failed", run_id)
        detail = "".join(traceback.format_exception_only(type(exc), exc)).strip()
        return _finish(run_id, lease, AnalysisRun.State.FAILED, error=detail, staged=staged)
    return _finish(run_id, lease, AnalysisRun.State.DONE, results=results, staged=staged, files=files)


def _relabel(run: AnalysisRun, lease: str, version: str) -> int | None:
    """Give the run the data version it actually reads; the id of the active or finished run that already has
    that version (this one then steps aside: the data would be analysed twice), else None."""
    done = AnalysisRun.objects.filter(study=run.study_id, data_version=version,
                                      state=AnalysisRun.State.DONE).exclude(pk=run.pk)
    other = done.values_list("pk", flat=True).first()
    if other is not None:
        return other
    try:
        with transaction.atomic():
            AnalysisRun.objects.filter(pk=run.pk, lease=lease, state=AnalysisRun.State.RUNNING).update(
                data_version=version)
    except IntegrityError:
        other = AnalysisRun.objects.filter(study=run.study_id, data_version=version, state__in=ACTIVE).exclude(
            pk=run.pk).values_list("pk", flat=True).first()
        return other if other is not None else -1
    run.data_version = version
    return None


def _raise_cancelled() -> None:
    raise pipeline.Cancelled("report")


def analysis_requeue_stale(now=None, stale_after: timedelta = STALE_AFTER) -> int:
    """Enqueue again every analysis run that has stayed queued longer than ``stale_after`` (its enqueue was lost,
    e.g. the broker was down), and every one that was abandoned while running; returns how many."""
    now = now or timezone.now()
    cutoff = now - stale_after
    n = 0
    for pk in AnalysisRun.objects.filter(state=AnalysisRun.State.QUEUED, created_at__lt=cutoff).values_list(
            "pk", flat=True):
        n += enqueue(RUN_ANALYSIS, pk)
    # a running run whose worker died (silent heartbeat, AnalysisRun.worker_lost): the next attempt takes it over
    n += len(analysis_recover_lost(now))
    return n
