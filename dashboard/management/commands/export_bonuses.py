"""``manage.py export_bonuses STUDY [--output FILE]``: Prolific's bulk bonus list for the study.

``<participant_id>,<amount>`` per line, no header (the format of Prolific's bulk bonus, in the study's currency),
for every completed session the researcher approved whose bonus under the study file's ``payments.bonus`` rule is
above zero. Undecided sessions get nothing until they are approved (``review_decisions``).
"""

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from dashboard import payments
from dashboard.selectors import review as review
from studyapp import selectors


class Command(BaseCommand):
    help = "Print (or write) the bonus CSV of a study: participant_id,amount per approved participant."

    def add_arguments(self, parser):
        parser.add_argument("study", help="the study's id (slug)")
        parser.add_argument("--output", help="write to this file instead of printing")

    def handle(self, *args, **opts):
        study = selectors.study_by_slug(opts["study"])
        if study is None:
            raise CommandError(f"no study {opts['study']!r}")
        if not (study.spec.get("payments") or {}).get("bonus"):
            raise CommandError(f"{study.slug}: the study file has no payments.bonus rule")
        text = payments.bonuses_csv(review.review_rows(study))
        if opts["output"]:
            Path(opts["output"]).write_text(text, encoding="utf-8")
            self.stdout.write(f"{study.slug}: {len(text.splitlines())} bonus(es) written to {opts['output']}")
        else:
            self.stdout.write(text, ending="")
