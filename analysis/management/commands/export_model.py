"""``manage.py export_model STUDY [--out model.json] [--run ID] [--block B]``: a study's perception model as a file.

``manage.py export_model --demo`` refits the demo model on simulated bots (``analysis.stats.demo_model``) and writes the
committed file ``analysis/data/demo-model.json``. The schema is docs/scoring.md.
"""

from __future__ import annotations

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from analysis.model_export import NoModel, finished_run, model_for
from analysis.stats import demo_model, perception_model
from studyapp.models import Study


class Command(BaseCommand):
    help = "Write a study's perception model (population acceptability over TTFT and rate) as a versioned JSON file."

    def add_arguments(self, parser):
        parser.add_argument("study", nargs="?", help="the study's slug (or numeric id)")
        parser.add_argument("--out", help="the file to write (default: stdout)")
        parser.add_argument("--run", type=int, help="the analysis run (default: the latest finished one)")
        parser.add_argument("--block", help="the yes/no block (default: the one with the most participants)")
        parser.add_argument("--demo", action="store_true",
                            help="refit the demo model on simulated bots of the demo study (a few minutes)")
        parser.add_argument("--bots", type=int, default=demo_model.DEMO_BOTS, help="with --demo: how many bots")

    def handle(self, *args, study=None, out=None, run=None, block=None, demo=False, bots=0, **options):
        if demo:
            if study:
                raise CommandError("--demo fits the demo study: give no STUDY")
            model, _ = demo_model.fit(n=bots)
            target = out or str(demo_model.DEMO_MODEL_PATH)
        else:
            if not study:
                raise CommandError("STUDY: give the study's slug (or --demo)")
            found = Study.objects.filter(slug=study).first() or (
                Study.objects.filter(pk=int(study)).first() if study.isdigit() else None)
            if found is None:
                raise CommandError(f"STUDY: no study {study!r}")
            try:
                model = model_for(found, finished_run(found, run), block)
            except (NoModel, perception_model.ModelFileError) as exc:
                raise CommandError(str(exc)) from None
            target = out
        text = perception_model.dumps(model)
        if target is None:
            self.stdout.write(text, ending="")
            return
        try:
            Path(target).parent.mkdir(parents=True, exist_ok=True)
            Path(target).write_text(text, encoding="utf-8")
        except OSError as exc:
            raise CommandError(f"--out: cannot write {target}: {exc.strerror or exc}") from None
        if model["population"].get("uncertainty") != "joint draws":
            self.stdout.write("note: answers came in after this analysis run, so the model carries its intervals "
                              "only (independent normals, narrower than joint draws): run the analysis again and "
                              "re-export for joint draws")
        label = f" ({model['label']})" if model["simulated"] else ""
        self.stdout.write(f"perception model of {model['provenance']['study']!r}{label} written to {target}")
