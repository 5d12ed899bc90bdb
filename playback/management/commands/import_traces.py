"""manage.py import_traces PATH... [--format F]: store recorded traces (atomic, de-duplicated)."""

from django.core.management.base import BaseCommand, CommandError

from playback import importers, services


class Command(BaseCommand):
    help = "Import trace files (or directories of them). A broken file imports nothing; re-imports are skipped."

    def add_arguments(self, parser):
        parser.add_argument("paths", nargs="+", help="trace files or directories")
        parser.add_argument("--format", choices=importers.FORMAT_NAMES, help="skip auto-detection")

    def handle(self, *args, **opts):
        try:
            outcome = services.traces_import(paths=opts["paths"], format=opts["format"])
        except importers.TraceFormatError as exc:
            raise CommandError(f"{exc}\nNothing was imported.") from exc
        except OSError as exc:
            raise CommandError(f"{exc}\nNothing was imported.") from exc
        for note in dict.fromkeys(outcome.notes):
            self.stdout.write(f"note: {note}")
        self.stdout.write(
            self.style.SUCCESS(f"imported {outcome.created} new, {outcome.duplicates} already stored")
        )
