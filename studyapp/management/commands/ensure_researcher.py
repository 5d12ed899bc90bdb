"""manage.py ensure_researcher [--username U]: create (or keep) a researcher account and print its login.

The password is generated once and kept in var/ (never in the repository), so running it twice prints the
same credentials. A researcher is not staff: everything a researcher does is in the dashboard and the management
commands, and the Django admin has nothing for them (``createsuperuser`` makes an operator's account).
"""

import secrets

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand


class Command(BaseCommand):
    help = "Create a researcher account for the demo and print its credentials (idempotent)."

    def add_arguments(self, parser):
        parser.add_argument("--username", default="researcher")

    def handle(self, *args, **opts):
        username = opts["username"]
        cred = settings.VAR_DIR / f"credentials-{username}.txt"
        cred.parent.mkdir(parents=True, exist_ok=True)
        password = cred.read_text().strip() if cred.exists() else secrets.token_urlsafe(12)
        cred.write_text(password)
        cred.chmod(0o600)
        User = get_user_model()
        user, created = User.objects.get_or_create(username=username)
        if created or not user.check_password(password):
            user.set_password(password)
            user.save()
        self.stdout.write(f"username: {username}")
        self.stdout.write(f"password: {password}")
