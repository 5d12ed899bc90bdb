"""Reads of stored streams."""

from __future__ import annotations

from django.db.models import QuerySet

from playback.core.stream import Stream
from playback.models import Stimulus, Trace


def traces_all() -> QuerySet[Trace]:
    return Trace.objects.all()


def traces_for(user) -> QuerySet[Trace]:
    """Traces a researcher may see and use: their own, the shared ones and the site's library (no owner)."""
    from django.db.models import Q

    if user is None or not user.is_authenticated:
        return Trace.objects.none()
    return Trace.objects.filter(Q(imported_by=user) | Q(shared=True) | Q(imported_by__isnull=True))


def trace_stream(trace: Trace) -> Stream:
    """The replayable stream of a trace; ``ValueError`` for a summary-only trace."""
    if trace.kind != Trace.Kind.STREAM:
        raise ValueError(f"trace {trace.pk} is a timing summary and cannot be replayed")
    return Stream.from_obj(trace.data)


def stimuli_for(user) -> QuerySet[Stimulus]:
    """Stimuli a user may use: their own and the shared ones (no owner)."""
    from django.db.models import Q

    if user is None or not user.is_authenticated:
        return Stimulus.objects.filter(owner__isnull=True)
    return Stimulus.objects.filter(Q(owner=user) | Q(owner__isnull=True))


def stimulus_stream(stimulus: Stimulus) -> Stream:
    return Stream.from_obj(stimulus.stream)
