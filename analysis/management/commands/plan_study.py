"""``manage.py plan_study STUDY [--participants 20,40,80] [--model FILE] [--runs 200] [--json] [--quick]``: how
well each participant count would pin down the study's headline (``analysis.stats.planning``), with progress.

STUDY is a loaded study's slug (the plan is then kept as its latest, and the dashboard shows it) or the path of a
study file. ``--model`` is a bot model file (the keys of docs/bots.md) or a pilot's ``results.json``
(docs/analysis.md, "Planning"). ``--quick`` simulates 50 studies per participant count instead of 200.
"""

from __future__ import annotations

import json
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError
from django.db import DatabaseError

from analysis import plans
from analysis.stats import planning
from studyapp.design import studyfile
from studyapp.models import Study

WIDTH = 30


def _counts(text: str) -> list[int]:
    try:
        counts = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise CommandError(f"--participants: a comma-separated list of whole numbers, got {text!r}") from None
    if not counts or any(n < 2 for n in counts):
        raise CommandError(f"--participants: each count must be at least 2, got {text!r}")
    return counts


class Command(BaseCommand):
    help = "Simulate the study with a known population and print the expected headline intervals and power."

    def add_arguments(self, parser):
        parser.add_argument("study", help="a loaded study's slug, or a study file (YAML)")
        parser.add_argument("--participants", default="20,40,80", help="participant counts (default 20,40,80)")
        parser.add_argument("--model", help="population model: a bot model file or an analysis results.json")
        parser.add_argument("--runs", type=int, default=None,
                            help=f"simulated studies per participant count (default {planning.DEFAULT_RUNS})")
        parser.add_argument("--quick", action="store_true",
                            help=f"{planning.QUICK_RUNS} simulated studies per count (rougher, faster)")
        parser.add_argument("--processes", type=int, default=None, help="worker processes (default: every core)")
        parser.add_argument("--json", action="store_true", help="print the plan as JSON")

    def _bar(self, done: int, total: int) -> None:
        filled = int(WIDTH * done / total) if total else WIDTH
        line = f"[{'#' * filled}{'.' * (WIDTH - filled)}] {done}/{total} simulated studies"
        err = self.stderr
        if err.isatty():
            err.write("\r" + line, ending="\n" if done == total else "")
        elif done == total or done % max(1, total // 10) == 0:
            err.write(line)
        err.flush()

    def handle(self, *args, study, participants, model, runs, quick, processes, **options):
        counts = _counts(participants)
        if runs is not None and runs < 1:
            raise CommandError(f"--runs: must be at least 1, got {runs}")
        runs = runs or (planning.QUICK_RUNS if quick else planning.DEFAULT_RUNS)
        if processes is not None and processes < 1:
            raise CommandError(f"--processes: must be at least 1, got {processes}")
        try:
            population = planning.load_model(model)
        except planning.ModelFileError as exc:
            raise CommandError(f"--model: {exc}") from None
        try:
            found = Study.objects.filter(slug=study).first()
        except DatabaseError:  # an unprepared database: a study file can still be planned
            if not Path(study).is_file():
                raise CommandError(f"{study}: the database is not prepared (run manage.py migrate), and no study file "
                                   f"has this path") from None
            found = None
        try:
            if found is not None:
                run = plans.plan_inline(study=found, population=population, participants=counts, runs=runs,
                                        processes=processes, echo=self._bar)
                if run.state != run.State.DONE:
                    raise CommandError(f"plan of {found.slug} failed: {run.error}")
                result = planning.Plan(**run.results)
            else:
                path = Path(study)
                if not path.is_file():
                    raise CommandError(f"{study}: no loaded study has this slug and no such study file exists "
                                       f"(load it with manage.py load_study, or give the file's path)")
                try:
                    spec = studyfile.load_study(path)
                except studyfile.StudyFileError as exc:
                    raise CommandError(str(exc)) from None
                result = planning.plan(spec, population, participants=counts, runs=runs, processes=processes,
                                       progress=self._bar)
        except ValueError as exc:
            raise CommandError(str(exc)) from None
        if options["json"]:
            self.stdout.write(json.dumps(result.to_dict(), indent=1))
        else:
            self.stdout.write(planning.table(result))
