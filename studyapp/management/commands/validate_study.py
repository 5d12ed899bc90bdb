"""manage.py validate_study FILE: every problem of a study file (path: message), or a short summary if valid."""

from django.core.management.base import BaseCommand, CommandError

from studyapp.design import plan as design
from studyapp.design import studyfile


class Command(BaseCommand):
    help = "Check a study file against the schema and the semantic rules; print every problem, or a summary."

    def add_arguments(self, parser):
        parser.add_argument("path", help="the study YAML file")
        parser.add_argument("--no-estimate", action="store_true",
                            help="skip the duration estimate (it synthesises every stimulus once)")

    def handle(self, *args, **opts):
        try:
            study = studyfile.load_study(opts["path"])
        except studyfile.StudyFileError as exc:
            for problem in exc.problems:
                self.stdout.write(str(problem))
            raise CommandError(f"{opts['path']}: {len(exc.problems)} problem(s)") from None
        expanded = design.expand(study)
        self.stdout.write(f"{opts['path']}: valid study {study['id']!r}")
        self.stdout.write(f"languages: {', '.join(study['languages'])}")
        self.stdout.write(f"blocks: {', '.join(b.id for b in expanded.blocks)}")
        self.stdout.write(f"conditions: {len(expanded.conditions)}")
        self.stdout.write(f"groups: {', '.join(g.id for g in expanded.groups)}")
        for warning in studyfile.language_warnings(study):
            self.stdout.write(f"warning: {warning}")
        if opts["no_estimate"]:
            return
        info = design.summary(expanded)
        for group, row in info["per_group"].items():
            minutes = row["estimated_s"] / 60.0
            self.stdout.write(f"group {group}: {row['trials']} trials per participant, about {minutes:.1f} min")
