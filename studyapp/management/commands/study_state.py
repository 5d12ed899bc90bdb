"""manage.py study_state SLUG open|pause|close|draft: change who may enter a study."""

from django.core.management.base import BaseCommand, CommandError

from studyapp import selectors, services

STATES = {"open": "open", "pause": "paused", "close": "closed", "draft": "draft"}


class Command(BaseCommand):
    help = "Open, pause or close a study (paused: new entries see a polite message, running sessions finish)."

    def add_arguments(self, parser):
        parser.add_argument("slug")
        parser.add_argument("action", choices=list(STATES))

    def handle(self, *args, **opts):
        study = selectors.study_by_slug(opts["slug"])
        if study is None:
            raise CommandError(f"no study {opts['slug']!r}")
        study = services.study_set_state(study=study, state=STATES[opts["action"]])
        self.stdout.write(f"{study.slug}: {study.state}")
