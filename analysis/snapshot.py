"""One consistent read of a study's data, and the version that names it.

The analysis, the exports and the dashboard's zip all read through here, so a version always names exactly the
data read, and no export pairs an answer with a stale session state (a torn read). Reads only: the run's writes
stay in ``analysis.services``.
"""

from __future__ import annotations

import hashlib
import json

from django.db import connection, transaction
from django.db.models import Count, Max

from analysis import selectors
from analysis.stats import pipeline
from studyapp.models import Answer, Session, Study


def data_version(study: Study) -> str:
    """A hash of everything the analysis reads: the study file, sessions' states and marks, answers, paint logs.

    Answers and paint batches are only ever added (never edited), so their count and largest id stand for them.
    """
    from playback.models.delivery import PaintReport

    sessions = list(Session.objects.filter(study=study, preview=False).order_by("id")
                    .values_list("id", "state", "excluded", "flags", "group"))
    answers = Answer.objects.filter(session__study=study, session__preview=False).aggregate(n=Count("id"),
                                                                                           last=Max("id"))
    paints = PaintReport.objects.filter(playback__trial_link__trial__session__study=study,
                                        playback__trial_link__trial__session__preview=False).aggregate(
        n=Count("id"), last=Max("id"))
    doc = {"pipeline": pipeline.PIPELINE_VERSION, "spec": study.spec_hash, "version": study.version,
           "sessions": sessions, "answers": answers, "paints": paints}
    return hashlib.sha256(json.dumps(doc, sort_keys=True, default=str).encode()).hexdigest()


def read_frames(study: Study) -> tuple:
    """(trials, participants) of a study from one snapshot, for exports: a torn read would pair, say, an answer
    with no answer time, or a stale session state with newer answers."""
    trials, participants, _version = read(study)
    return trials, participants


def read(study: Study) -> tuple:
    """The frames and the data version they came from, read from one snapshot, so the version names exactly the
    data analysed: one REPEATABLE READ transaction on PostgreSQL, ``_read_optimistic`` elsewhere."""
    if connection.vendor != "postgresql":
        return _read_optimistic(study)
    outermost = not transaction.get_connection().in_atomic_block
    with transaction.atomic():
        if outermost:
            with connection.cursor() as cursor:
                cursor.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
        version = data_version(study)
        trials, participants = selectors.study_frame(study)
    return trials, participants, version


def _read_optimistic(study: Study, frame=None, attempts: int = 5) -> tuple:
    """Read without a transaction (this project's SQLite transactions are IMMEDIATE: one would hold the write lock
    for the whole read and stall participants' answers): the version is read before and after the frames, and the
    read repeated while answers arrive in between. If they never stop, the frames are labelled with the earlier
    version, so the next request sees newer data and analyses them again."""
    frame = frame or selectors.study_frame
    for _attempt in range(attempts):
        before = data_version(study)
        trials, participants = frame(study)
        if data_version(study) == before:
            break
    return trials, participants, before
