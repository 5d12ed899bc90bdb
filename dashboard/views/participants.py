"""Participant pages: the list, one participant's timeline (with the review and the decision), a trial's replay.

Thin shells: ``with_study`` authorises through ``access.study_for`` first (404 for strangers, whatever they send),
then a selector reads within that study, so an id of another study's session or trial is a 404 as well. Ids
travel as query parameters (``?id=``, ``?trial=``): every route keeps the single ``slug`` argument that
tests/dashboard/test_access.py walks. The quality table and payments are in ``views_review``.
"""

from __future__ import annotations

from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.views.decorators.cache import never_cache

from dashboard import access
from dashboard.selectors import participants as sel
from dashboard.selectors import review as review
from dashboard.views.review import with_reasons
from dashboard.views.studies import with_study


@never_cache
@with_study("view")
def participants(request: HttpRequest, study) -> HttpResponse:
    return render(request, "dashboard/participants.html", {"study": study, "rows": sel.sessions(study)})


@never_cache
@with_study("view")
def participant(request: HttpRequest, study) -> HttpResponse:
    session = sel.session_of(study, request.GET.get("id"))
    if session is None:
        raise Http404("no such participant")
    row = with_reasons(review.review_rows(study, session_ids=[session.pk])[0])
    return render(request, "dashboard/participant.html", {
        "study": study, "session": session, "steps": sel.timeline(study, session),
        "environment": sorted((session.environment or {}).items()), "review": row,
        "can_decide": access.can(study.role, "edit"), "reasons": review.rejection_reasons(study.spec)})


def _replay_or_404(request: HttpRequest, study) -> dict:
    data = sel.trial_replay(study, request.GET.get("trial"), request.GET.get("position", "0"))
    if data is None:
        raise Http404("no such trial showing")
    return data


@never_cache
@with_study("view")
def replay_page(request: HttpRequest, study) -> HttpResponse:
    data = _replay_or_404(request, study)
    return render(request, "dashboard/replay.html", {"study": study, "replay": data, "summary": data["summary"]})


@never_cache
@with_study("view")
def replay_json(request: HttpRequest, study) -> JsonResponse:
    """The replay data the page animates (scheduled and painted frames), for scripts and tests."""
    return JsonResponse(_replay_or_404(request, study))
