"""Participant endpoints: the entry link, the current step (HTML and JSON), submissions and withdrawal.

The server decides where a participant is: every GET shows the current step, whatever the URL or history says.
Submissions are JSON with the client's idempotency key; the acknowledgement is sent after the commit.
Participant pages are never cached (``Cache-Control: no-store``): the back button fetches the current step again.
"""

from __future__ import annotations

import json
import logging
from urllib.parse import urlencode

from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.middleware.csrf import get_token
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import translation
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET, require_POST

from pacelab import browsers
from studyapp import journey, selectors, services
from studyapp.models import Session, Study

log = logging.getLogger("studyapp")
COOKIE = "pacelab_s_{}"
END_TEXT = {Session.State.COMPLETED: "completion", Session.State.SCREENED_OUT: "screen_out",
            Session.State.TIMED_OUT: "timeout", Session.State.WITHDRAWN: "withdrawn",
            Session.State.RETURNED: "returned"}
END_LINK = {Session.State.COMPLETED: "completion", Session.State.SCREENED_OUT: "screen_out",
            Session.State.TIMED_OUT: "returned", Session.State.RETURNED: "returned",
            Session.State.WITHDRAWN: "returned"}  # a panel counts a withdrawal as a return


def _session_or_404(token: str) -> Session:
    session = selectors.session_by_token(token)
    if session is None:
        log.warning("refused unknown participant token")
        raise Http404("unknown session")
    return session


def _language(request: HttpRequest, study: Study) -> str:
    wanted = request.GET.get("lang") or translation.get_language_from_request(request)
    langs = study.spec.get("languages", ["en"])
    if wanted in langs:
        return wanted
    if wanted and wanted.lower().startswith("zh") and "zh-hans" in langs:
        return "zh-hans"
    return langs[0]


def _study_title(study: Study, language: str) -> str:
    return journey.localize(study.spec.get("title", study.title), language)


@never_cache
@require_GET
def enter(request: HttpRequest, slug: str) -> HttpResponse:
    """The participant link: panel parameters in, a session (new or resumed) out."""
    study = selectors.study_by_slug(slug)
    if study is None:
        raise Http404("unknown study")
    names = (study.spec.get("recruitment") or {}).get("params") or {
        "participant": "PROLIFIC_PID", "study": "STUDY_ID", "session": "SESSION_ID"}
    panel = {key: request.GET.get(name, "") for key, name in names.items()}
    language = _language(request, study)
    if not panel.get("participant"):
        token = request.COOKIES.get(COOKIE.format(study.pk))
        existing = selectors.session_by_token(token) if token else None
        if existing is not None and existing.study_id == study.pk:
            return redirect("participant", token=existing.token)
    allowed = (study.spec.get("limits") or {}).get("browsers")
    if not browsers.allowed(browsers.engine_of(request.headers.get("User-Agent"))[0], allowed):
        # the browser requirement, like the device one, is told before consent: nothing is stored
        with translation.override(language):
            return render(request, "studyapp/unavailable.html",
                          {"study": study, "study_title": _study_title(study, language), "reason": "browser",
                           "browsers": ("、" if language.startswith("zh") else ", ").join(browsers.brands(allowed)),
                           "language": language}, status=200)
    try:
        session, _created = services.session_enter(study=study, panel=panel, language=language)
    except services.StudyUnavailable as exc:
        with translation.override(language):
            return render(request, "studyapp/unavailable.html",
                          {"study": study, "study_title": _study_title(study, language), "reason": exc.reason,
                           "language": language}, status=200)
    response = redirect("participant", token=session.token)
    response.set_cookie(COOKIE.format(study.pk), session.token, max_age=7 * 24 * 3600, httponly=True,
                        samesite="Lax")
    return response


def _end_context(session: Session) -> dict:
    recruitment = session.study.spec.get("recruitment") or {}
    link = recruitment.get(END_LINK.get(session.state, ""), {}) or {}
    text_key = END_TEXT.get(session.state, "")
    if session.state == Session.State.SCREENED_OUT and any(f.startswith("screened out: device") for f in session.flags):
        if (session.study.spec.get("texts") or {}).get("refused_device"):
            text_key = "refused_device"  # the study's own words for a device it does not allow
    return {"end_text": selectors.study_text(session.study, text_key, session.language),
            "code": link.get("code", ""), "redirect_url": link.get("url", "")}


def _form_context(view: dict) -> dict:
    """What the template needs beyond the view to draw scales (Django templates have no ``range``)."""
    ctx: dict = {}
    items = []
    for item in view.get("items", []):
        extra = {"is_required": item.get("required", True)}
        if item["type"] == "likert":
            extra["points_list"] = list(range(1, int(item.get("points", 5)) + 1))
        items.append(item | extra)
    ctx["items"] = items
    trial = view.get("trial") or {}
    scale = trial.get("scale") or {}
    if trial.get("type") == "rating" and scale.get("type", "likert") == "likert":
        labels = scale.get("labels") or []
        ctx["likert_points"] = [{"value": i, "label": labels[i - 1] if i <= len(labels) else ""}
                                for i in range(1, int(scale.get("points", 5)) + 1)]
    return ctx


def _page_context(request: HttpRequest, session: Session) -> dict:
    view = selectors.step_view(session)
    ctx = {"session": session, "view": view, "view_json": view}
    if session.state == Session.State.ACTIVE:
        ctx.update(_form_context(view))
    if session.state != Session.State.ACTIVE:
        ctx.update(_end_context(session))
    elif view["kind"] == "trial":
        from studyapp.models import Trial

        trial = Trial.objects.get(session=session, index=view["trial"]["index"])
        playbacks = services.trial_show(session=session, trial=trial)
        view["trial"]["playbacks"] = [{"token": p.token, "mode": p.mode} for p in playbacks]
    return ctx


@never_cache
@require_GET
def participant(request: HttpRequest, token: str) -> HttpResponse:
    session = services.session_touch(session=_session_or_404(token))
    with translation.override(session.language):
        ctx = _page_context(request, session)
        return render(request, "studyapp/participant.html", ctx)


@never_cache
@require_GET
def step_json(request: HttpRequest, token: str) -> JsonResponse:
    """The current step as JSON (bots and scripts use it; showing a trial here creates its playbacks too)."""
    session = services.session_touch(session=_session_or_404(token))
    get_token(request)  # the CSRF cookie that submissions must echo
    with translation.override(session.language):
        ctx = _page_context(request, session)
    view = ctx["view"]
    if session.state != Session.State.ACTIVE:
        view.update({k: ctx[k] for k in ("end_text", "code", "redirect_url")})
    return JsonResponse(view)


@require_POST
def submit(request: HttpRequest, token: str) -> JsonResponse:
    session = _session_or_404(token)
    try:
        body = json.loads(request.body or b"{}")
    except ValueError as exc:
        return JsonResponse({"ok": False, "code": "invalid", "error": f"malformed JSON: {exc}"}, status=400)
    if not isinstance(body, dict):
        return JsonResponse({"ok": False, "code": "invalid", "error": "body must be a JSON object"}, status=400)
    try:
        result = services.session_submit(session_token=session.token, client_id=body.get("client_id"),
                                         step=body.get("step"), payload=body.get("payload", {}))
    except services.SubmitRefused as exc:
        log.info("refused submission for session %s: %s", session.pk, exc.message)
        status = 409 if exc.code in ("stale_step", "not_active") else 400
        return JsonResponse({"ok": False, "code": exc.code, "error": exc.message, "step": exc.current_step},
                            status=status)
    if result.state == Session.State.DECLINED:
        next_url = reverse("declined", args=[session.study.slug]) + "?" + urlencode({"lang": session.language})
    else:
        next_url = reverse("participant", args=[session.token])
    return JsonResponse({"ok": True, "ack": result.client_id, "step": result.step, "next_step": result.next_step,
                         "state": result.state, "duplicate": result.duplicate, "next": next_url})


@require_POST
def withdraw(request: HttpRequest, token: str) -> HttpResponse:
    session = services.session_withdraw(session=_session_or_404(token))
    return redirect("participant", token=session.token)


@never_cache
@require_GET
def declined(request: HttpRequest, slug: str) -> HttpResponse:
    study = selectors.study_by_slug(slug)
    if study is None:
        raise Http404("unknown study")
    language = _language(request, study)
    with translation.override(language):
        return render(request, "studyapp/declined.html",
                      {"study": study, "study_title": _study_title(study, language),
                       "text": selectors.study_text(study, "decline", language)})
