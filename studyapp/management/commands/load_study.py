"""manage.py load_study FILE [--owner USER] [--open]: create or update a study from its file, atomically."""

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from studyapp import services
from studyapp.design import studyfile


class Command(BaseCommand):
    help = "Validate a study file and create or update the study (all or nothing)."

    def add_arguments(self, parser):
        parser.add_argument("file")
        parser.add_argument("--owner", default="researcher", help="username of the owning researcher")
        parser.add_argument("--open", action="store_true", help="open the study for participants")

    def handle(self, *args, **opts):
        try:
            doc = studyfile.load_study(opts["file"])
        except studyfile.StudyFileError as exc:
            raise CommandError("the study file has problems:\n" + "\n".join(map(str, exc.problems))) from exc
        owner = get_user_model().objects.filter(username=opts["owner"]).first()
        if owner is None:
            raise CommandError(f"--owner: no user {opts['owner']!r} (create one with manage.py ensure_researcher)")
        study, created = services.study_load(doc=doc, owner=owner)
        if opts["open"]:
            services.study_set_state(study=study, state="open")
            study.refresh_from_db()
        self.stdout.write(f"{'created' if created else 'updated'} study {study.slug} "
                          f"(version {study.version}, {study.state})")
