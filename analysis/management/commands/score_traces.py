"""``manage.py score_traces FILE... --model model.json [--population-share 0.75] [--json] [--html OUT]
[--vs B...]``: how serving requests would feel to the study's population (nothing is stored).

Thin shell: ``analysis.stats.score_input`` reads and measures, ``analysis.stats.scoring`` scores,
``analysis.stats.score_compare`` compares, ``analysis.reporting.score_text`` / ``analysis.score_html`` present.
docs/scoring.md documents the JSON keys.
"""

from __future__ import annotations

import json
from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from analysis.reporting import score_text
from analysis.stats import perception_model, score_compare, scoring
from analysis.stats.demo_model import DEMO_MODEL_PATH
from analysis.stats.score_input import TraceInputError, load_requests
from playback.core import importers

JSON_VERSION = 1


class Command(BaseCommand):
    help = "Predict the share of a study's population that would accept each request of serving traces."

    def add_arguments(self, parser):
        parser.add_argument("files", nargs="+", help="trace files (any format import_traces reads) or directories")
        parser.add_argument("--model", default=str(DEMO_MODEL_PATH),
                            help="a perception model file (export_model); default: the demo model (simulated)")
        parser.add_argument("--population-share", type=float, default=None,
                            help="the share of the population a request must satisfy (default: the model's)")
        parser.add_argument("--vs", nargs="+", default=None, metavar="B", help="compare FILE... (A) with these (B)")
        parser.add_argument("--format", choices=importers.FORMAT_NAMES, help="skip auto-detection")
        parser.add_argument("--json", action="store_true", help="print the score as JSON (keys in docs/scoring.md)")
        parser.add_argument("--html", metavar="OUT", help="write a one-page HTML report with the plot")
        parser.add_argument("--draws", type=int, default=200, help="draws from the model's uncertainty")
        parser.add_argument("--seed", type=int, default=0)
        parser.add_argument("--language", default="en", choices=[code for code, _n in settings.LANGUAGES],
                            help="the HTML report's language")

    def handle(self, *args, files, model, population_share, vs, format, json: bool, html, draws, seed,
               language, **options):
        if population_share is not None and not 0 < population_share < 1:
            raise CommandError(f"--population-share: must lie strictly between 0 and 1, got {population_share:g}")
        if draws < 20:
            raise CommandError(f"--draws: at least 20, got {draws}")
        try:
            m = perception_model.load(model)
        except perception_model.ModelFileError as exc:
            raise CommandError(f"--model: {exc}") from None
        runs = [("A" if vs else "run", files)] + ([("B", vs)] if vs else [])
        scored = []
        for label, paths in runs:
            try:
                loaded = load_requests(paths, m, format)
            except TraceInputError as exc:
                raise CommandError(str(exc)) from None
            result = scoring.score(m, loaded.requests, population_share=population_share, draws=draws, seed=seed,
                                   keep_draws=bool(vs))
            result["files"] = loaded.files
            result["notes"] = loaded.notes[:20]
            scored.append((f"{label}: {', '.join(Path(p).name for p in paths)}" if vs else
                           ", ".join(Path(p).name for p in paths), result))
        comparison = None
        if vs:
            try:
                comparison = score_compare.compare(scored[0][1], scored[1][1], seed=seed)
            except ValueError as exc:
                raise CommandError(f"--vs: {exc}") from None
        if html:
            from analysis import score_html

            try:
                Path(html).parent.mkdir(parents=True, exist_ok=True)
                Path(html).write_text(score_html.render(m, scored, comparison, language), encoding="utf-8")
            except OSError as exc:
                raise CommandError(f"--html: cannot write {html}: {exc.strerror or exc}") from None
        if json:
            self.stdout.write(_dumps(m, scored, comparison))
        else:
            for name, result in scored:
                self.stdout.write("\n".join(score_text.summary(result, name)))
                self.stdout.write("")
            if comparison:
                self.stdout.write("\n".join(score_text.comparison(comparison, scored[0][0], scored[1][0])))
                self.stdout.write("\n".join(score_text.banner(scored[0][1]["model"])))
        if html:
            self.stdout.write(f"HTML report: {html}") if not json else self.stderr.write(f"HTML report: {html}")


def _dumps(model: dict, scored: list, comparison: dict | None) -> str:
    clean = [{k: v for k, v in r.items() if not k.startswith("_")} | {"name": name} for name, r in scored]
    doc = {"score_version": JSON_VERSION, "simulated": model["simulated"], "label": model["label"],
           "runs": clean, "comparison": comparison}
    return json.dumps(doc, indent=1, ensure_ascii=False, allow_nan=False)
