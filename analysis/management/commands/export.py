"""manage.py export STUDY [--out DIR] [--format csv,parquet] [--include-excluded]: write a study's tidy data.

A thin shell: ``analysis.snapshot.read_frames`` reads (one snapshot), ``analysis.tables.exporting.export`` applies the
study file's exclusion rules and writes; this command prints the files written and the exclusion report.
"""

from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from analysis import snapshot
from analysis.tables import exclusions, exporting
from studyapp.selectors import study_by_slug


class Command(BaseCommand):
    help = "Export a study's trials (CSV, Parquet), participants, codebook and exclusion report to a directory."

    def add_arguments(self, parser):
        parser.add_argument("study", help="the study id (slug)")
        parser.add_argument("--out", help="directory to write (default var/exports/STUDY)")
        parser.add_argument("--format", default="csv,parquet", help="comma-separated: csv, parquet")
        parser.add_argument("--include-excluded", action="store_true",
                            help="keep excluded trials in the trials file (marked in `excluded`)")

    def handle(self, *args, **opts):
        study = study_by_slug(opts["study"])
        if study is None:
            raise CommandError(f"no study {opts['study']!r}")
        try:
            formats = exporting.parse_formats(opts["format"])
        except ValueError as exc:
            raise CommandError(str(exc)) from None
        out = Path(opts["out"]) if opts["out"] else Path(settings.VAR_DIR) / "exports" / study.slug
        trials, participants = snapshot.read_frames(study)
        try:
            result = exporting.export(out, trials, participants, exclusions.rules_of(study.spec), formats=formats,
                                      include_excluded=opts["include_excluded"], title=study.slug,
                                      spec=study.spec)
        except exclusions.ExclusionError as exc:
            raise CommandError(str(exc)) from None
        lines = [f"{study.slug}: {result.trials_written} trial rows, {result.participants_written} participants"]
        lines += [f"wrote {path}" for path in result.files]
        lines += ["exclusions:", *result.report.lines()]
        self.stdout.write("\n".join(lines))
