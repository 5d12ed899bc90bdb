"""manage.py import_traces PATH... [--format F] [--owner USER [--shared]]: store recorded traces (atomic,
de-duplicated). Without --owner they go to the site's library, which every researcher sees; with it, only to that
researcher unless --shared."""

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from playback.core import importers
from playback.services import streams as services


class Command(BaseCommand):
    help = "Import trace files (or directories of them). A broken file imports nothing; re-imports are skipped."

    def add_arguments(self, parser):
        parser.add_argument("paths", nargs="+", help="trace files or directories")
        parser.add_argument("--format", choices=importers.FORMAT_NAMES, help="skip auto-detection")
        parser.add_argument("--owner", help="username of the researcher who owns them (default: the site's library)")
        parser.add_argument("--shared", action="store_true", help="with --owner: every researcher may see them")

    def handle(self, *args, **opts):
        owner = None
        if opts["owner"]:
            owner = get_user_model().objects.filter(username=opts["owner"]).first()
            if owner is None:
                raise CommandError(f"--owner: no user {opts['owner']!r}")
        elif opts["shared"]:
            raise CommandError("--shared goes with --owner (the site's library is seen by everyone already)")
        try:
            outcome = services.traces_import(paths=opts["paths"], format=opts["format"], by=owner,
                                             shared=opts["shared"])
        except importers.TraceFormatError as exc:
            raise CommandError(f"{exc}\nNothing was imported.") from exc
        except OSError as exc:
            raise CommandError(f"{exc}\nNothing was imported.") from exc
        for note in dict.fromkeys(outcome.notes):
            self.stdout.write(f"note: {note}")
        for warning in dict.fromkeys(outcome.warnings):
            self.stderr.write(self.style.WARNING(f"warning: {warning}"))
        self.stdout.write(
            self.style.SUCCESS(f"imported {outcome.created} new, {outcome.duplicates} already stored")
        )
