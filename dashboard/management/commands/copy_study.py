"""manage.py copy_study STUDY NEW_ID --owner USER: a new draft study with the same study file."""

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from dashboard import services
from studyapp import selectors


class Command(BaseCommand):
    help = "Copy a study under a new id (same study file, state draft, no sessions) for an owner."

    def add_arguments(self, parser):
        parser.add_argument("study", help="the study to copy (its id)")
        parser.add_argument("new_id", help="the copy's id (a lowercase slug)")
        parser.add_argument("--owner", help="username of the copy's owner (default: the original's owner)")

    def handle(self, *args, **opts):
        study = selectors.study_by_slug(opts["study"])
        if study is None:
            raise CommandError(f"no study {opts['study']!r}")
        owner = study.owner
        if opts["owner"]:
            owner = get_user_model().objects.filter(username=opts["owner"]).first()
            if owner is None:
                raise CommandError(f"--owner: no user {opts['owner']!r}")
        try:
            new = services.study_copy(study=study, slug=opts["new_id"], by=owner)
        except services.ActionRefused as exc:
            raise CommandError(str(exc)) from None
        self.stdout.write(f"copied {study.slug} to {new.slug} (owner {owner.get_username()}, {new.state})")
