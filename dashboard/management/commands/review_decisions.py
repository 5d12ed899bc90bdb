"""``manage.py review_decisions STUDY [list|approve|reject] [SESSION ...] [--suggested] [--reason-id ID | --reason
TEXT] [--by USER]``: the quality page's review from the command line.

- ``list`` (the default): one line per completed participant: session, panel id, suggested, decided, reason.
- ``approve SESSION ...``: approve those sessions; ``approve --suggested`` approves every completed session whose
  suggestion is approve and that nobody decided yet (the command line's "approve all suggested").
- ``reject SESSION ... --reason-id attention`` (one of the study's ``payments.rejection_reasons``) or
  ``--reason "..."``: a rejection without a reason is refused, as on the page.

All or nothing: one session that cannot be decided (another study's, not completed) and none is stored.
"""

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from dashboard import payments
from dashboard.selectors import review as review
from studyapp import selectors


class Command(BaseCommand):
    help = "List, approve or reject a study's participants (a rejection needs a reason)."

    def add_arguments(self, parser):
        parser.add_argument("study", help="the study's id (slug)")
        parser.add_argument("action", nargs="?", default="list", choices=("list", "approve", "reject"))
        parser.add_argument("sessions", nargs="*", type=int, help="session ids (see `list`)")
        parser.add_argument("--suggested", action="store_true",
                            help="with approve: every undecided completed session suggested for approval")
        parser.add_argument("--reason-id", default="", help="one of the study's rejection reasons (by id)")
        parser.add_argument("--reason", default="", help="the reason the participant will read")
        parser.add_argument("--by", help="the researcher deciding (username)")

    def handle(self, *args, **opts):
        study = selectors.study_by_slug(opts["study"])
        if study is None:
            raise CommandError(f"no study {opts['study']!r}")
        if opts["action"] == "list":
            for r in review.review_rows(study):
                if r["state"] == "completed":
                    self.stdout.write(f"{r['session']}\t{r['panel_pid'] or '-'}\tsuggested={r['suggestion']}\t"
                                      f"decided={r['decision'] or '-'}\t{r['reason']}")
            return
        by = None
        if opts["by"]:
            by = get_user_model().objects.filter(username=opts["by"]).first()
            if by is None:
                raise CommandError(f"no user {opts['by']!r}")
        try:
            if opts["action"] == "approve" and opts["suggested"]:
                if opts["sessions"]:
                    raise CommandError("give either session ids or --suggested")
                ids = [r["session"] for r in review.review_rows(study)]
                rows = payments.approve_suggested(study=study, session_ids=ids, by=by)
            else:
                rows = payments.payment_decide_many(study=study, session_ids=opts["sessions"],
                                                    decision=opts["action"], reason=opts["reason"],
                                                    reason_id=opts["reason_id"], by=by)
        except payments.DecisionRefused as exc:
            raise CommandError(str(exc)) from None
        self.stdout.write(f"{study.slug}: {opts['action']}: {len(rows)} participant(s)"
                          + (f" ({', '.join(str(r.session_id) for r in rows)})" if rows else ""))
