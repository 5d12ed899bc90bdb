"""manage.py load_demo: store the demo traces and stimuli (idempotent: a second run changes nothing)."""

from django.core.management.base import BaseCommand

from playback.core import demo, tokenizers
from playback.services import streams as services


class Command(BaseCommand):
    help = "Load PaceLab's demo traces and named stimuli."

    def add_arguments(self, parser):
        parser.add_argument("--owner", help="also load and open the demo study, owned by this researcher")

    def handle(self, *args, **opts):
        outcome = services.traces_import(paths=demo.trace_files())
        made = 0
        for d in demo.DEMO_STIMULI:
            try:
                stream = d.build()
            except tokenizers.TokenizerUnavailable as exc:
                self.stdout.write(f"skipped stimulus {d.name!r}: {exc}")
                continue
            services.stimulus_save(name=d.name, stream=stream, spec=d.spec(), owner=None)
            made += 1
        self.stdout.write(f"demo traces: {outcome.created} new, {outcome.duplicates} already stored; "
                          f"demo stimuli: {made}")
        if opts["owner"]:
            from django.core.management import call_command

            from studyapp.design import studyfile

            call_command("load_study", str(studyfile.demo_study_path()), owner=opts["owner"], open=True,
                         stdout=self.stdout)
