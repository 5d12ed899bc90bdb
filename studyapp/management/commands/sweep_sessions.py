"""manage.py sweep_sessions: mark sessions past their time limit as timed out (run it from cron or beat)."""

from django.core.management.base import BaseCommand

from studyapp import services


class Command(BaseCommand):
    help = "Time out active sessions past their study's time limit."

    def handle(self, *args, **opts):
        self.stdout.write(f"timed out {services.sessions_expire()} session(s)")
