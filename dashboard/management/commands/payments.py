"""``manage.py payments STUDY [--decision approve|reject [--source decided|suggested]] [--decide SESSION
approve|reject REASON] [--by USER]``.

Without ``--decide``: print the payment CSV (``payments.csv``, or with ``--decision`` the one-column
``PROLIFIC_PID`` list of the researcher's decisions for the panel's bulk approval; ``--source suggested``: the
undecided sessions with that suggestion). ``review_decisions`` decides many at once.
With ``--decide``: store a researcher's decision, as the
dashboard's quality page does. See docs/dashboard.md, "Paying participants".
"""

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from dashboard import payments
from dashboard.core.quality import DECISIONS
from dashboard.selectors import review as review
from studyapp import selectors


class Command(BaseCommand):
    help = "Print a study's payment decisions as CSV, or store a decision for one participant."

    def add_arguments(self, parser):
        parser.add_argument("study", help="the study's id (slug)")
        parser.add_argument("--decision", choices=DECISIONS, help="only the panel ids with this decision")
        parser.add_argument("--source", choices=payments.SOURCES, default="decided",
                            help="with --decision: the researcher's decisions (default) or undecided suggestions")
        parser.add_argument("--decide", nargs=3, metavar=("SESSION", "DECISION", "REASON"),
                            help="store a decision for one participant (session id)")
        parser.add_argument("--by", help="the researcher deciding (username)")

    def handle(self, *args, **opts):
        study = selectors.study_by_slug(opts["study"])
        if study is None:
            raise CommandError(f"no study {opts['study']!r}")
        if opts["decide"]:
            session, decision, reason = opts["decide"]
            by = None
            if opts["by"]:
                by = get_user_model().objects.filter(username=opts["by"]).first()
                if by is None:
                    raise CommandError(f"no user {opts['by']!r}")
            try:
                row = payments.payment_decide(study=study, session_id=int(session) if session.isdigit() else 0,
                                              decision=decision, reason=reason, by=by)
            except payments.DecisionRefused as exc:
                raise CommandError(str(exc)) from None
            self.stdout.write(f"{study.slug}: participant {row.session_id}: {row.decision}")
            return
        self.stdout.write(payments.payments_csv(study, review.review_rows(study), opts["decision"], opts["source"]),
                          ending="")
