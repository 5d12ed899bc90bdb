"""Reviewing submissions: the quality table (filters, sort, pages, bulk decisions), the decision endpoint (also
used from a participant's own page), the payment and bonus files, and the reconciliation with the panel's export.

Thin shells over ``dashboard.selectors.review`` (reads) and ``dashboard.payments`` (writes). Deciding needs
``edit``; everything else ``view``. Ids travel as form fields and query parameters, so each route keeps the one
``slug`` argument tests/dashboard/test_access.py walks.
"""

from __future__ import annotations

from urllib.parse import urlencode

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy, ngettext
from django.views.decorators.cache import never_cache

from dashboard import access, payments, tasks
from dashboard.core import reconcile
from dashboard.selectors import participants as sel
from dashboard.selectors import review as review
from dashboard.views.studies import with_study

REASONS = {  # dashboard.core.quality reason codes, translated
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
COLUMNS = (  # (sort key or "", label, numeric)
    ("participant", gettext_lazy("Participant"), False), ("state", gettext_lazy("State"), False),
    ("minutes", gettext_lazy("Minutes"), True), ("attention", gettext_lazy("Attention checks failed"), True),
    ("catch", gettext_lazy("Catch trials correct"), True), ("", gettext_lazy("Ratings (distinct values)"), True),
    ("late", gettext_lazy("Painted late"), True), ("median_rt", gettext_lazy("Median response (ms)"), True),
    ("hidden", gettext_lazy("Trials with the page hidden"), True), ("suggested", gettext_lazy("Suggested"), False),
    ("decision", gettext_lazy("Decision"), False),
)
FILTERS = ("state", "suggested", "decided", "group", "attention", "flagged", "shorter_than", "q")
MISMATCHES = {
    "in_panel_not_here": gettext_lazy("In the panel's list but not here"),
    "here_not_completed": gettext_lazy("Submitted on the panel but not completed here"),
    "code_mismatch": gettext_lazy("Completion code does not match the code this study gave"),
    "here_not_in_panel": gettext_lazy("Here but not in the panel's list"),
}


def translated(reason) -> str:
    """A quality reason (a ``Reason`` or its dict) in the page's language."""
    code = reason["code"] if isinstance(reason, dict) else reason.code
    params = reason.get("params", {}) if isinstance(reason, dict) else reason.params
    text = reason.get("text", "") if isinstance(reason, dict) else reason.text
    template = REASONS.get(code)
    try:
        return str(template) % params if template is not None else text
    except (KeyError, TypeError, ValueError):
        return text


def with_reasons(row: dict) -> dict:
    q = row["quality"] or {}
    row["reasons"] = [translated(r) for r in q.get("reasons") or []]
    row["notes"] = [translated(r) for r in q.get("notes") or []]
    return row


@never_cache
@with_study("view")
def quality(request: HttpRequest, study) -> HttpResponse:
    rows = review.review_rows(study, budget_s=review.PAGE_BUDGET_S)
    pending = sum(1 for r in rows if r["pending"])
    if pending:  # the rest is computed in the background; the page says so
        tasks.quality_refresh_soon(study.pk)
    chosen = {k: request.GET.get(k, "") for k in FILTERS}
    shown = review.sort_rows(review.filter_rows(rows, chosen), request.GET.get("sort", ""))
    page = review.page_of(shown, request.GET.get("page", "1"), request.GET.get("per_page", ""))
    for row in page["rows"]:
        with_reasons(row)
    keep = {k: v for k, v in chosen.items() if v}
    sort = request.GET.get("sort", "")
    headers = []
    for key, label, numeric in COLUMNS:
        href = arrow = ""
        if key:
            href = "?" + urlencode({**keep, "sort": f"-{key}" if sort == key else key,
                                    "per_page": page["per_page"]})
            arrow = "▲" if sort == key else "▼" if sort == f"-{key}" else ""
        headers.append({"key": key, "label": label, "numeric": numeric, "href": href, "arrow": arrow})
    due_bonuses = payments.bonus_rows(rows)
    return render(request, "dashboard/quality.html", {
        "study": study, "page": page, "counts": review.counts(rows), "pending": pending,
        "can_decide": access.can(study.role, "edit"),
        "param": payments.participant_param(study.spec), "filters": chosen, "sort": sort,
        "groups": sorted({r["group"] for r in rows if r["group"]}),
        "states": sorted({r["state"] for r in rows}), "reasons": review.rejection_reasons(study.spec),
        "query": urlencode({**keep, **({"sort": sort} if sort else {}), "per_page": page["per_page"]}),
        "filter_query": urlencode(keep), "sorts": review.SORTS, "per_pages": review.PER_PAGE,
        "headers": headers, "bonus_count": len(due_bonuses), "bonus_total": sum(a for _, a in due_bonuses),
        "currency": (study.spec.get("payments") or {}).get("currency", ""),
        "approvable_here": sum(1 for r in page["rows"] if r["state"] == "completed"
                               and r["suggestion"] == "approve" and r["decision"] is None)})


def _back(request: HttpRequest, study) -> str:
    """Where to return after deciding: the page the form came from (same host only), else the quality page."""
    target = request.POST.get("next", "")
    if target and url_has_allowed_host_and_scheme(target, allowed_hosts={request.get_host()},
                                                  require_https=request.is_secure()):
        return target
    return reverse("dashboard:quality", kwargs={"slug": study.slug})


@with_study("edit", ("POST",))
def decide(request: HttpRequest, study) -> HttpResponse:
    """One or many decisions (``session`` repeated), or ``action=approve_suggested`` over the ``shown`` rows."""
    back = _back(request, study)
    try:
        if request.POST.get("action") == "approve_suggested":
            ids = [i for i in (sel.parse_id(v) for v in request.POST.getlist("shown")) if i]
            rows = payments.approve_suggested(study=study, session_ids=ids, by=request.user)
        else:
            ids = [sel.parse_id(v) or 0 for v in request.POST.getlist("session")]
            rows = payments.payment_decide_many(study=study, session_ids=ids,
                                                decision=request.POST.get("decision", ""),
                                                reason=request.POST.get("reason", ""),
                                                reason_id=request.POST.get("reason_id", ""), by=request.user)
    except payments.DecisionRefused as exc:
        messages.error(request, str(exc))
        return redirect(back)
    if len(rows) == 1:
        messages.success(request, _("Decision saved for participant %(id)s.") % {"id": rows[0].session_id})
    else:
        messages.success(request, ngettext("Decision saved for %(n)s participant.",
                                           "Decision saved for %(n)s participants.", len(rows)) % {"n": len(rows)})
    return redirect(back)


def _csv(text: str, name: str) -> HttpResponse:
    response = HttpResponse(text, content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{name}"'
    return response


@never_cache
@with_study("view")
def payments_csv(request: HttpRequest, study) -> HttpResponse:
    decision = request.GET.get("decision") or None
    source = request.GET.get("source") or "decided"
    try:
        text = payments.payments_csv(study, review.review_rows(study), decision, source)
    except payments.DecisionRefused as exc:
        return HttpResponse(str(exc), status=400, content_type="text/plain; charset=utf-8")
    if decision:
        name = f"{study.slug}-{decision}-{'decided' if source == 'decided' else 'suggested-unreviewed'}.csv"
    else:
        name = f"{study.slug}-payments.csv"
    return _csv(text, name)


@never_cache
@with_study("view")
def bonuses_csv(request: HttpRequest, study) -> HttpResponse:
    return _csv(payments.bonuses_csv(review.review_rows(study)), f"{study.slug}-bonuses.csv")


@never_cache
@with_study("view", ("GET", "POST"))
def reconcile_page(request: HttpRequest, study) -> HttpResponse:
    """Upload the panel's export (nothing is stored) and see what does not match."""
    result, error = None, ""
    if request.method == "POST":
        upload = request.FILES.get("export")
        if upload is None:
            error = _("Choose the panel's export file (CSV).")
        elif upload.size > reconcile.MAX_BYTES:
            error = _("The export is too large (at most 20 MB).")
        else:
            try:
                result = payments.reconcile_export(study, upload.read().decode("utf-8-sig"))
            except UnicodeDecodeError:
                error = _("The export must be UTF-8 text.")
            except reconcile.ExportError as exc:
                error = str(exc)
    groups = [(kind, MISMATCHES[kind], result.mismatches[kind]) for kind in reconcile.KINDS] if result else []
    return render(request, "dashboard/reconcile.html", {"study": study, "result": result, "error": error,
                                                         "groups": groups})
