"""Reads for the analysis layer: a study's rows from the database, handed to ``analysis.tables.tidy``.

One query per model (sessions, trials, answers, the answered showings with their streams, paint reports), so the
cost does not grow with a query per trial. Preview sessions are never analysed. A trial whose playbacks are
missing (deleted, or answered before playbacks were linked) has its streams rebuilt from its stored spec.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

import pandas as pd
from django.db.models import F, OuterRef, Subquery

from analysis.tables import tidy
from playback.core.stream import Stream
from playback.models.delivery import PaintReport
from studyapp.models import Answer, Session, Study, Trial, TrialPlayback

SESSION_FIELDS = ("id", "panel_pid", "panel_study_id", "panel_session_id", "state", "group", "language",
                  "environment", "flags", "excluded", "started_at", "finished_at")
TRIAL_FIELDS = ("id", "session_id", "index", "block", "kind", "condition", "spec", "practice", "attention", "status",
                "plays", "interruptions", "answered_at")


def answered_showings(study: Study):
    """The ``TrialPlayback`` rows of each trial's last showing (the one answered), with their streams."""
    last = TrialPlayback.objects.filter(trial=OuterRef("trial")).order_by("-showing").values("showing")[:1]
    return (TrialPlayback.objects.filter(trial__session__study=study, trial__session__preview=False)
            .annotate(last_showing=Subquery(last)).filter(showing=F("last_showing")))


def study_rows(study: Study, sessions: Collection[int] | None = None) -> tidy.StudyRows:
    """Everything ``analysis.tables.tidy`` needs about a study (or only about the ``sessions`` given), as plain rows."""
    live: dict = {"session__study": study, "session__preview": False}
    only: dict = {}
    if sessions is not None:
        live["session_id__in"] = only["id__in"] = list(sessions)
    session_rows = list(Session.objects.filter(study=study, preview=False, **only).values(*SESSION_FIELDS))
    trials = list(Trial.objects.filter(**live).values(*TRIAL_FIELDS))
    answers = list(Answer.objects.filter(**live, key="trial", trial__isnull=False)
                   .values("trial_id", "value", "response_ms", "comment"))
    links = answered_showings(study)
    if sessions is not None:
        links = links.filter(trial__session_id__in=list(sessions))
    showings = [{"trial_id": r["trial_id"], "position": r["position"], "showing": r["showing"],
                 "playback_id": r["playback_id"], "stream": r["playback__stream"]}
                for r in links.values("trial_id", "position", "showing", "playback_id", "playback__stream")]
    paints = list(PaintReport.objects.filter(playback_id__in=links.values("playback_id"))
                  .order_by("playback_id", "batch").values("playback_id", "entries"))
    return tidy.StudyRows(slug=study.slug, spec=study.spec, sessions=session_rows, trials=trials, answers=answers,
                          showings=showings, paints=paints)


def _rebuilder(study: Study):
    from studyapp import stimuli

    def rebuild(trial: dict) -> Sequence[Stream]:
        return [stream for _, stream in stimuli.trial_streams(study, Trial(spec=trial["spec"]))]

    return rebuild


def study_frame(study: Study, *, rebuild: bool = True,
                sessions: Collection[int] | None = None) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(trials, participants) of a study (or of some of its ``sessions``): ``analysis.tables.tidy`` over its rows,
    exclusions not yet applied."""
    return tidy.build(study_rows(study, sessions), rebuild=_rebuilder(study) if rebuild else None)
