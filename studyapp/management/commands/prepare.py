"""manage.py prepare [--username U]: make a fresh state directory ready: the tables, then a researcher account.

The one command a researcher runs before any other on a new machine or a new ``PACELAB_VAR_DIR`` /
``DATABASE_URL``. Idempotent: run again (after an update, say) it applies any new migrations and prints the same
login (``ensure_researcher`` keeps the password in the state directory).
"""

from django.core.management import call_command
from django.core.management.base import BaseCommand


class Command(BaseCommand):
    help = "Prepare the database: apply migrations and create (or keep) a researcher account; prints its login."

    def add_arguments(self, parser):
        parser.add_argument("--username", default="researcher", help="the researcher account (default researcher)")

    def handle(self, *args, **opts):
        call_command("migrate", interactive=False, verbosity=0)
        self.stdout.write("database ready (migrations applied)")
        call_command("ensure_researcher", username=opts["username"], stdout=self.stdout)
