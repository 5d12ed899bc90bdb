"""Participant endpoints: the entry link, the current step (HTML and JSON), submissions and withdrawal.

The server decides where a participant is: every GET shows the current step, whatever the URL or history says.
Submissions are JSON with the client's idempotency key; the acknowledgement is sent after the commit.
Participant pages are never cached (``Cache-Control: no-store``): the back button fetches the current step again.
"""

from __future__ import annotations

import json
import logging
from urllib.parse import urlencode

from django.conf import settings
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.middleware.csrf import get_token
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import translation
from django.utils.translation import gettext as _
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET, require_POST

from pacelab import browsers, request_limits
from studyapp import selectors, services
from studyapp.journey import responses
from studyapp.journey import steps as journey
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


def _language(request: HttpRequest, study: Study, asked: str | None = None) -> str:
    wanted = asked or request.GET.get("lang") or translation.get_language_from_request(request)
    langs = study.spec.get("languages", ["en"])
    if wanted in langs:
        return wanted
    if wanted and wanted.lower().startswith("zh") and "zh-hans" in langs:
        return "zh-hans"
    return langs[0]


def requirement_lines(limits: dict) -> list[str]:
    """The study's device requirements as sentences in the active language (stated before consent)."""
    lines = []
    devices = [d for d in ("desktop", "tablet", "phone") if d in (limits.get("devices") or ())]
    if devices and len(devices) < 3:
        names = {"desktop": _("a computer"), "tablet": _("a tablet"), "phone": _("a phone")}
        lines.append(_("Use %(devices)s.") % {"devices": _(" or ").join(names[d] for d in devices)})
        if "phone" not in devices:
            lines.append(_("Phones cannot be used for this study."))
    viewport = limits.get("min_viewport") or {}
    if viewport.get("width") or viewport.get("height"):
        lines.append(_("A browser window at least %(width)s × %(height)s pixels.")
                     % {"width": viewport.get("width", 0), "height": viewport.get("height", 0)})
    if limits.get("min_refresh_hz"):
        lines.append(_("A screen that refreshes at least %(hz)s times a second (almost every screen does).")
                     % {"hz": limits["min_refresh_hz"]})
    return lines


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
    cookie_token = request.COOKIES.get(COOKIE.format(study.pk))
    if not panel.get("participant"):
        existing = selectors.session_by_token(cookie_token) if cookie_token else None
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
        session, created = services.session_enter(study=study, panel=panel, language=language)
    except services.StudyUnavailable as exc:
        with translation.override(language):
            return render(request, "studyapp/unavailable.html",
                          {"study": study, "study_title": _study_title(study, language), "reason": exc.reason,
                           "language": language}, status=200)
    if not created and not services.session_may_resume(session, cookie_token=cookie_token,
                                                       panel_session_id=panel.get("session", "")):
        log.warning("refused re-entry of study %s by panel id alone (no cookie, panel session id or code)",
                    study.slug)
        return _resume_page(request, study, language, pid=panel["participant"])
    return _to_session(session, study)


def _to_session(session: Session, study: Study) -> HttpResponse:
    response = redirect("participant", token=session.token)
    response.set_cookie(COOKIE.format(study.pk), session.token, max_age=7 * 24 * 3600, httponly=True,
                        samesite="Lax")
    return response


def _resume_page(request: HttpRequest, study: Study, language: str, *, pid: str, wrong_code: bool = False
                 ) -> HttpResponse:
    """The page for a panel id that already has a session, entered without proof that it is its participant:
    it says so and asks for the resume code; it never shows or names the other session."""
    with translation.override(language):
        return render(request, "studyapp/resume.html",
                      {"study": study, "study_title": _study_title(study, language), "pid": pid,
                       "language": language, "wrong_code": wrong_code}, status=200)


@never_cache
@require_POST
def resume(request: HttpRequest, slug: str) -> HttpResponse:
    """Continue a session in another browser with its resume code (the form of the resume page)."""
    study = selectors.study_by_slug(slug)
    if study is None:
        raise Http404("unknown study")
    language = _language(request, study, request.POST.get("lang"))
    pid = responses.panel_value(request.POST.get("pid"))
    session = selectors.session_by_panel_id(study, pid) if pid else None
    if session is not None and services.session_may_resume(session, code=request.POST.get("code", "")):
        return _to_session(session, study)
    log.warning("refused a resume code for study %s", study.slug)
    return _resume_page(request, study, language, pid=pid, wrong_code=True)


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
    ctx = {"session": session, "view": view, "view_json": view,
           "resume_code": services.resume_code(session) if session.panel_pid else ""}
    if session.state == Session.State.ACTIVE:
        ctx.update(_form_context(view))
        if view["kind"] == "consent":
            ctx["requirements"] = requirement_lines(session.study.spec.get("limits") or {})
            ctx["refused_text"] = selectors.study_text(session.study, "refused_device", session.language)
    if session.state != Session.State.ACTIVE:
        ctx.update(_end_context(session))
    elif view["kind"] == "trial":
        from studyapp.models import Trial

        trial = Trial.objects.get(session=session, index=view["trial"]["index"])
        playbacks = services.trial_show(session=session, trial=trial)
        view["trial"]["playbacks"] = [{"token": p.token, "mode": p.mode} for p in playbacks]
        # shown before and not answered: a reload or a lost connection; the page says it plays again
        view["trial"]["replayed"] = Trial.objects.filter(pk=trial.pk, plays__gt=1).exists()
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
    refused = request_limits.too_large(request, settings.PARTICIPANT_SUBMIT_MAX_BYTES)
    if refused is not None:
        return refused
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
        next_url = _declined_url(session, result.flags[0] if result.flags else "declined")
    else:
        next_url = reverse("participant", args=[session.token])
    return JsonResponse({"ok": True, "ack": result.client_id, "step": result.step, "next_step": result.next_step,
                         "state": result.state, "duplicate": result.duplicate, "next": next_url})


def _declined_url(session: Session, reason: str) -> str:
    return reverse("declined", args=[session.study.slug]) + "?" + urlencode({"lang": session.language,
                                                                            "reason": reason})


@require_POST
def withdraw(request: HttpRequest, token: str) -> HttpResponse:
    session = _session_or_404(token)
    after = services.session_withdraw(session=session)
    if after is None:  # before consent: nothing was kept
        return redirect(_declined_url(session, "withdrawn"))
    return redirect("participant", token=after.token)


@never_cache
@require_GET
def declined(request: HttpRequest, slug: str) -> HttpResponse:
    study = selectors.study_by_slug(slug)
    if study is None:
        raise Http404("unknown study")
    language = _language(request, study)
    reason = request.GET.get("reason", "declined")
    reason = reason if reason in ("declined", "withdrawn", "device") else "declined"
    text_key = {"declined": "decline", "withdrawn": "", "device": "refused_device"}[reason]
    returned = ((study.spec.get("recruitment") or {}).get("returned") or {}).get("url", "")
    with translation.override(language):
        return render(request, "studyapp/declined.html",
                      {"study": study, "study_title": _study_title(study, language), "reason": reason,
                       "text": selectors.study_text(study, text_key, language) if text_key else "",
                       "requirements": requirement_lines(study.spec.get("limits") or {}) if reason == "device"
                       else [], "redirect_url": returned})
