"""Participant pages: the list, one participant's timeline, a trial's replay, the quality report and payments.

Thin shells: ``with_study`` authorises through ``access.study_for`` first (404 for strangers, whatever they send),
then a selector reads within that study, so an id of another study's session or trial is a 404 as well. Ids
travel as query parameters (``?id=``, ``?trial=``): every route keeps the single ``slug`` argument that
tests/dashboard/test_access.py walks. Deciding payments needs ``edit``.
"""

from __future__ import annotations

from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views.decorators.cache import never_cache

from dashboard import access, payments
from dashboard import selectors_participants as sel
from dashboard.views import with_study

REASONS = {  # dashboard.quality reason codes, translated
    "attention": gettext_lazy("failed %(failed)s of %(answered)s attention checks"),
    "catch": gettext_lazy("answered %(correct)s of %(answered)s catch trials correctly"),
    "straight_lining": gettext_lazy("gave every one of %(n)s ratings the same value (%(value)s)"),
    "too_fast": gettext_lazy("median response time %(median_ms)s ms is below %(min_ms)s ms"),
    "short_session": gettext_lazy("finished in %(minutes)s min, below %(min_minutes)s min"),
    "tab_hidden": gettext_lazy("the page was hidden during %(hidden)s of %(trials)s trials"),
    "tab_hidden_some": gettext_lazy("the page was hidden during %(hidden)s of %(trials)s trials"),
    "fidelity": gettext_lazy("%(violated)s of %(checked)s trials were painted late (not the participant's fault)"),
    "not_completed": gettext_lazy("did not complete (%(state)s): the panel settles it"),
}


def translated(reason) -> str:
    template = REASONS.get(reason.code)
    return str(template) % reason.params if template is not None else reason.text


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
    return render(request, "dashboard/participant.html", {
        "study": study, "session": session, "steps": sel.timeline(study, session),
        "environment": sorted((session.environment or {}).items())})


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


@never_cache
@with_study("view")
def quality(request: HttpRequest, study) -> HttpResponse:
    rows = payments.quality_report(study)
    for row in rows:
        row["reasons"] = [translated(r) for r in row["quality"].reasons]
        row["notes"] = [translated(r) for r in row["quality"].notes]
    counts = {d: sum(1 for r in rows if r["decision"] == d and r["state"] == "completed")
              for d in ("approve", "reject")}
    return render(request, "dashboard/quality.html", {
        "study": study, "rows": rows, "counts": counts, "can_decide": access.can(study.role, "edit"),
        "param": payments.participant_param(study.spec)})


@with_study("edit", ("POST",))
def decide(request: HttpRequest, study) -> HttpResponse:
    try:
        row = payments.payment_decide(study=study, session_id=sel.parse_id(request.POST.get("session")) or 0,
                                      decision=request.POST.get("decision", ""),
                                      reason=request.POST.get("reason", ""), by=request.user)
    except payments.DecisionRefused as exc:
        messages.error(request, str(exc))
        return redirect("dashboard:quality", slug=study.slug)
    messages.success(request, _("Decision saved for participant %(id)s.") % {"id": row.session_id})
    return redirect(reverse("dashboard:quality", kwargs={"slug": study.slug}) + f"#p{row.session_id}")


@never_cache
@with_study("view")
def payments_csv(request: HttpRequest, study) -> HttpResponse:
    decision = request.GET.get("decision") or None
    try:
        text = payments.payments_csv(study, payments.quality_report(study), decision)
    except payments.DecisionRefused as exc:
        return HttpResponse(str(exc), status=400, content_type="text/plain; charset=utf-8")
    response = HttpResponse(text, content_type="text/csv; charset=utf-8")
    name = f"{study.slug}-{decision}.csv" if decision else f"{study.slug}-payments.csv"
    response["Content-Disposition"] = f'attachment; filename="{name}"'
    return response
