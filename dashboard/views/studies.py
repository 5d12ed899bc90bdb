"""Dashboard pages: thin shells that authorise through ``access.study_for``, call one service, render.

Every page takes a logged-in researcher; a study they have no role in is a 404 (as if it did not exist).
State changes are POST forms with CSRF; the live numbers arrive over ``/ws/dashboard/<slug>/``.
"""

from __future__ import annotations

from functools import wraps

import yaml
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse, HttpResponseNotAllowed, JsonResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import translation
from django.utils.translation import gettext as _
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET, require_http_methods

from dashboard import access, services
from dashboard.forms import CopyForm, ShareForm, StudyFileForm
from dashboard.selectors import studies as selectors
from studyapp.design.studyfile import StudyFileError

PREVIEWS_KEY = "dashboard_previews"


def with_study(need: str, methods: tuple[str, ...] = ("GET",)):
    """Log in, then fetch the study through ``access.study_for`` (404 for strangers) before anything else, even
    the method check: a stranger learns nothing, whatever they send. The view gets the study instead of the slug
    (and the URL's other parts as keywords).
    """
    allowed = (*methods, "HEAD") if "GET" in methods else methods

    def decorate(view):
        @login_required
        @wraps(view)
        def wrapper(request: HttpRequest, slug: str, **path) -> HttpResponse:
            study = access.study_for(request.user, slug, need)
            if request.method not in allowed:
                return HttpResponseNotAllowed(allowed)
            return view(request, study, **path)

        return wrapper

    return decorate


@login_required
@require_GET
def study_list(request: HttpRequest) -> HttpResponse:
    return render(request, "dashboard/list.html", {"rows": selectors.studies_with_roles(request.user)})


def _study_form(request: HttpRequest, save, template_context: dict) -> HttpResponse:
    """Shared by create and edit: validate the posted file or text with ``save``; show problems in place."""
    problems = []
    if request.method == "POST":
        form = StudyFileForm(request.POST, request.FILES)
        if form.is_valid():
            text = form.cleaned_data["text"]
            try:
                study = save(text)
            except StudyFileError as exc:
                problems = exc.problems
                form = StudyFileForm(initial={"text": text})  # an uploaded file lands in the editor to fix
            else:
                return redirect("dashboard:detail", slug=study.slug)
    else:
        form = StudyFileForm(initial=template_context.pop("initial", {}))
    return render(request, "dashboard/study_form.html", {**template_context, "form": form, "problems": problems},
                  status=400 if problems else 200)


@login_required
@require_http_methods(["GET", "POST"])
def study_create(request: HttpRequest) -> HttpResponse:
    return _study_form(request, lambda text: services.study_create(text=text, owner=request.user), {"study": None})


@with_study("edit", ("GET", "POST"))
def study_edit(request: HttpRequest, study) -> HttpResponse:
    text = yaml.safe_dump(study.spec, allow_unicode=True, sort_keys=False, width=110)
    return _study_form(request, lambda t: services.study_update(study=study, text=t),
                       {"study": study, "initial": {"text": text}})


def _participant_link(request: HttpRequest, study) -> str:
    base = request.build_absolute_uri(reverse("enter", kwargs={"slug": study.slug}))
    params = selectors.panel_params(study.spec)
    if (study.spec.get("recruitment") or {}).get("panel") == "prolific":
        names = [params[k] for k in ("participant", "study", "session") if k in params]
        return base + "?" + "&".join(f"{name}={{{{%{name}%}}}}" for name in names)
    return base


@never_cache
@with_study("view")
def study_detail(request: HttpRequest, study) -> HttpResponse:
    return render(request, "dashboard/detail.html", {
        "study": study, "role": study.role, "can_edit": access.can(study.role, "edit"),
        "is_owner": access.can(study.role, "own"), "snapshot": selectors.study_snapshot(study),
        "codes": selectors.completion_codes(study.spec), "participant_link": _participant_link(request, study),
        "params": selectors.panel_params(study.spec), "actions": _actions(study.state)})


def _actions(state: str) -> list[tuple[str, str]]:
    labels = {"open": _("Open"), "pause": _("Pause"), "close": _("Close")}
    return [(action, labels[action]) for action, (_s, sources) in services.ACTIONS.items() if state in sources]


@with_study("edit", ("POST",))
def study_state(request: HttpRequest, study) -> HttpResponse:
    try:
        services.study_action(study=study, action=request.POST.get("action", ""))
    except services.ActionRefused as exc:
        messages.error(request, str(exc))
    return redirect("dashboard:detail", slug=study.slug)


@with_study("edit", ("GET", "POST"))
def study_copy(request: HttpRequest, study) -> HttpResponse:
    form = CopyForm(request.POST or None, initial={"slug": f"{study.slug}-copy"[:63]})
    if request.method == "POST" and form.is_valid():
        try:
            new = services.study_copy(study=study, slug=form.cleaned_data["slug"], by=request.user)
        except services.ActionRefused as exc:
            form.add_error("slug", str(exc))
        else:
            return redirect("dashboard:detail", slug=new.slug)
    return render(request, "dashboard/copy.html", {"study": study, "form": form},
                  status=400 if form.errors else 200)


@with_study("own", ("GET", "POST"))
def study_share(request: HttpRequest, study) -> HttpResponse:
    form = ShareForm(request.POST or None)
    if request.method == "POST" and request.POST.get("remove"):
        services.study_unshare(study=study, username=request.POST["remove"])
        return redirect("dashboard:share", slug=study.slug)
    if request.method == "POST" and form.is_valid():
        try:
            services.study_share(study=study, username=form.cleaned_data["username"], role=form.cleaned_data["role"])
        except services.ActionRefused as exc:
            form.add_error("username", str(exc))
        else:
            return redirect("dashboard:share", slug=study.slug)
    members = study.members.select_related("user").order_by("user__username")
    return render(request, "dashboard/share.html", {"study": study, "form": form, "members": members},
                  status=400 if form.errors else 200)


@with_study("view", ("POST",))
def study_preview(request: HttpRequest, study) -> HttpResponse:
    """Try the study as a participant would, in any state; nothing of it is counted, and starting another
    preview discards the previous ones."""
    language = translation.get_language() or "en"
    earlier = request.session.get(PREVIEWS_KEY, [])
    session = services.preview_start(study=study, language=language, earlier=earlier)
    request.session[PREVIEWS_KEY] = [session.token]
    return redirect("participant", token=session.token)


@never_cache
@with_study("view")
def study_snapshot_json(request: HttpRequest, study) -> JsonResponse:
    """The live snapshot as JSON (what the websocket pushes), for scripts."""
    return JsonResponse(selectors.study_snapshot(study))


@with_study("view")
def study_spec_yaml(request: HttpRequest, study) -> HttpResponse:
    """The current study file (as stored: comments are not kept)."""
    text = yaml.safe_dump(study.spec, allow_unicode=True, sort_keys=False, width=110)
    response = HttpResponse(text, content_type="application/yaml; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{study.slug}-v{study.version}.yaml"'
    return response
