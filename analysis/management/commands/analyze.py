"""``manage.py analyze STUDY [--force] [--wait] [--inline] [--language zh-hans]``: run a study's analysis
pipeline, with a progress bar.

The same service as the dashboard: an unchanged data version returns the stored run. In the embedded mode (or with
``--inline``) the pipeline runs in this process; otherwise the run goes to a Celery worker and ``--wait`` follows
it. Ctrl-C cancels the run. Prints where the report is.
"""

from __future__ import annotations

import sys
import time

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from analysis import services
from analysis.models import AnalysisRun
from studyapp.models import Study

WIDTH = 30


class Command(BaseCommand):
    help = "Analyse a study (psychometric fits, ratings, 2AFC, predictors, fidelity) and write its HTML report."

    def add_arguments(self, parser):
        parser.add_argument("study", help="the study's slug (or numeric id)")
        parser.add_argument("--force", action="store_true", help="analyse again even if the data did not change")
        parser.add_argument("--wait", action="store_true", help="follow a queued run until it finishes")
        parser.add_argument("--inline", action="store_true", help="run in this process instead of on a worker")
        parser.add_argument("--language", default="", choices=["", *(code for code, _name in settings.LANGUAGES)],
                            help="the HTML report's language (default: LANGUAGE_CODE)")

    def _bar(self, stage: str, percent: float) -> None:
        filled = int(WIDTH * percent / 100)
        line = f"[{'#' * filled}{'.' * (WIDTH - filled)}] {percent:5.1f} % {stage:<14}"
        if self.stdout.isatty():
            self.stdout.write("\r" + line, ending="")
            self.stdout.flush()
        elif stage != self._last_stage:
            self.stdout.write(line)
        self._last_stage = stage

    def _finished(self, run: AnalysisRun) -> None:
        if self.stdout.isatty():
            self.stdout.write("")
        if run.state == AnalysisRun.State.DONE:
            self.stdout.write(self.style.SUCCESS(f"analysis run {run.pk} done"))
            self.stdout.write(f"report: {services.report_path(run)}")
            return
        if run.state == AnalysisRun.State.CANCELLED:
            raise CommandError(f"analysis run {run.pk} cancelled")
        raise CommandError(f"analysis run {run.pk} failed: {run.error}")

    def handle(self, *args, study, force, wait, inline, language="", **options):
        self._last_stage = None
        found = Study.objects.filter(slug=study).first()
        if found is None and study.isdigit():
            found = Study.objects.filter(pk=int(study)).first()
        if found is None:
            raise CommandError(f"no study {study!r}")
        inline = inline or settings.CELERY_TASK_ALWAYS_EAGER
        run = services.analysis_request(study=found, force=force, enqueue_task=not inline, language=language)
        if run.state == AnalysisRun.State.DONE:
            self.stdout.write(f"the data did not change since run {run.pk} (use --force to analyse again)")
            return self._finished(run)
        if inline:
            if run.state == AnalysisRun.State.RUNNING:
                raise CommandError(f"analysis run {run.pk} is already running elsewhere")
            self.stdout.write(f"analysis run {run.pk} (data version {run.data_version[:12]}), in this process")
            try:
                run = services.analysis_run(run_id=run.pk, echo=self._bar)
            except KeyboardInterrupt:
                self.stdout.write("")
                raise CommandError(f"analysis run {run.pk} cancelled") from None
            return self._finished(run)
        self.stdout.write(f"analysis run {run.pk} {run.state} on the task queue")
        if not wait:
            self.stdout.write(f"follow it with: manage.py analyze {found.slug} --wait")
            return None
        try:
            while True:
                run.refresh_from_db()
                if run.finished:
                    return self._finished(run)
                self._bar(run.stage or run.state, run.percent)
                time.sleep(0.5)
        except KeyboardInterrupt:
            services.analysis_cancel(run=run)
            sys.stdout.write("\ncancelling ...\n")
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline:
                run.refresh_from_db()
                if run.finished:
                    break
                time.sleep(0.5)
            raise CommandError(f"analysis run {run.pk}: {run.state}") from None
