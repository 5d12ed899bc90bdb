"""manage.py share_study STUDY USER --role editor|viewer [--remove]: give a colleague a role on a study."""

from django.core.management.base import BaseCommand, CommandError

from dashboard import services
from dashboard.access import EDITOR, VIEWER
from studyapp import selectors


class Command(BaseCommand):
    help = "Share a study with another researcher as editor or viewer (or remove them with --remove)."

    def add_arguments(self, parser):
        parser.add_argument("study", help="the study's id (slug)")
        parser.add_argument("user", help="the colleague's username")
        parser.add_argument("--role", choices=[EDITOR, VIEWER], default=VIEWER)
        parser.add_argument("--remove", action="store_true", help="take the colleague's role away")

    def handle(self, *args, **opts):
        study = selectors.study_by_slug(opts["study"])
        if study is None:
            raise CommandError(f"no study {opts['study']!r}")
        if opts["remove"]:
            n = services.study_unshare(study=study, username=opts["user"])
            self.stdout.write(f"{study.slug}: {opts['user']} removed" if n else
                              f"{study.slug}: {opts['user']} had no role")
            return
        try:
            member = services.study_share(study=study, username=opts["user"], role=opts["role"])
        except services.ActionRefused as exc:
            raise CommandError(str(exc)) from None
        self.stdout.write(f"{study.slug}: {member.user.get_username()} is {member.role}")
