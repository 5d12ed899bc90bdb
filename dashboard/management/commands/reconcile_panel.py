"""``manage.py reconcile_panel STUDY FILE [--json]``: compare the panel's submissions export (Prolific's CSV)
with the study's sessions and print every mismatch: in the panel but not here, submitted there but not completed
here, a completion code that is not the one this study gave, and here but not in the panel's list."""

import json
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from dashboard import payments
from dashboard.core import reconcile
from studyapp import selectors

TITLES = {"in_panel_not_here": "in the panel but not here", "here_not_completed": "submitted there, not completed "
          "here", "code_mismatch": "completion code mismatch", "here_not_in_panel": "here but not in the panel"}


class Command(BaseCommand):
    help = "Reconcile a study with the panel's submissions export (CSV)."

    def add_arguments(self, parser):
        parser.add_argument("study", help="the study's id (slug)")
        parser.add_argument("file", help="the panel's export (Prolific: the study's submissions CSV)")
        parser.add_argument("--json", action="store_true", help="print the result as JSON")

    def handle(self, *args, **opts):
        study = selectors.study_by_slug(opts["study"])
        if study is None:
            raise CommandError(f"no study {opts['study']!r}")
        try:
            text = Path(opts["file"]).read_text(encoding="utf-8-sig")
        except (OSError, UnicodeDecodeError) as exc:
            raise CommandError(f"{opts['file']}: {exc}") from None
        try:
            result = payments.reconcile_export(study, text)
        except reconcile.ExportError as exc:
            raise CommandError(f"{opts['file']}: {exc}") from None
        if opts["json"]:
            self.stdout.write(json.dumps({"panel_rows": result.panel_rows, "sessions": result.sessions,
                                          "matched": result.matched, "duplicates": result.duplicates,
                                          "mismatches": result.mismatches}, default=str, indent=2))
            return
        self.stdout.write(f"{study.slug}: {result.panel_rows} submissions in the export, {result.sessions} sessions "
                          f"here with a panel id: {result.matched} match, {result.total} mismatch(es)")
        for kind in reconcile.KINDS:
            items = result.mismatches[kind]
            self.stdout.write(f"\n{TITLES[kind]} ({len(items)})")
            for m in items:
                end = f"{m['finished_at']:%Y-%m-%d %H:%M:%S}" if m.get("finished_at") else "-"
                took = f"{m['duration_s']:.0f} s" if m.get("duration_s") is not None else "-"
                here = (f"session {m['session']} {m['state']}, code given {m.get('code_given') or '-'}, "
                        f"submitted {end}, took {took}") if m.get("session") else "-"
                panel = (f"panel {m['panel_status'] or '-'}, code {m.get('panel_code') or '-'}"
                         if "panel_status" in m else "not in the export")
                self.stdout.write(f"  {m['participant']}: {panel}; here: {here}")
