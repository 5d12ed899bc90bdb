"""What a run's stage and stored error say to a researcher, in the reader's language.

The run row keeps stage keys and English error text (logs, the command line, the status JSON); the dashboard shows
them through these tables. The error texts are built here too, so what is stored and what is recognised match.
"""

from __future__ import annotations

import re

from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

STAGE_LABELS = {
    "loading": gettext_lazy("Reading the data"),
    "exclusions": gettext_lazy("Exclusions"),
    "psychometric": gettext_lazy("Psychometric functions"),
    "population": gettext_lazy("Population acceptability"),
    "ratings": gettext_lazy("Ratings"),
    "pairwise": gettext_lazy("Pairwise comparisons"),
    "predictors": gettext_lazy("Which metric predicts perceived speed"),
    "fidelity": gettext_lazy("Timing fidelity"),
    "figures": gettext_lazy("Figures and report"),
    "done": gettext_lazy("Done"),
    "lost": gettext_lazy("Worker lost, restarting"),  # analysis.models.LOST_STAGE
}

DATABASE_LOST = "the database connection was lost"


def abandoned(minutes: int) -> str:
    return f"abandoned: its process stopped without finishing (no sign of life for {minutes} min)"


def superseded(run_id: int) -> str:
    return f"superseded: run {run_id} analyses the same, newer data"


def stage_label(stage: str) -> str:
    return str(STAGE_LABELS.get(stage, stage))


def error_text(error: str) -> str:
    """The stored error in the active language; an exception's own text (a failed run) is shown as it is."""
    if m := re.fullmatch(r"abandoned: .*\(no sign of life for (\d+) min\)", error):
        return _("Abandoned: its process stopped without finishing (no sign of life for %(minutes)s min).") % {
            "minutes": m.group(1)}
    if (m := re.fullmatch(r"superseded: run (\d+) .*", error)) is not None:
        return _("Not run: analysis run %(run)s covers the same, newer data.") % {"run": m.group(1)}
    if error == DATABASE_LOST:
        return _("The database connection was lost.")
    return error
