"""Analysis pages: run the analysis with live progress, cancel it, read the results, download the files.

Thin shells over ``analysis.services`` (writes) and ``analysis.selectors`` / ``analysis.tables.exporting`` (reads).
A run is addressed as ``?run=<id>`` and always looked up within the study ``access.study_for`` returned, so another
study's run is a 404. Starting and cancelling need ``edit``; a viewer reads results and downloads files.
Progress arrives over ``ws/dashboard/<slug>/analysis/<run>/`` (``dashboard.consumers.analysis``) with a poll of
``analysis/status.json`` as the fallback.
"""

from __future__ import annotations

import mimetypes
from typing import Any

from csp.constants import NONE, SELF
from csp.decorators import csp_replace
from django.http import FileResponse, Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.cache import never_cache

from analysis import messages, services, snapshot
from analysis.models import LOST_STAGE, AnalysisFile, AnalysisRun
from analysis.tables import exclusions, exporting, headline
from dashboard import access
from dashboard.predictor_rows import predictor_rows
from dashboard.selectors.participants import parse_id
from dashboard.views.studies import with_study

TYPES = {".svg": "image/svg+xml", ".png": "image/png", ".pdf": "application/pdf", ".html": "text/html; charset=utf-8",
         ".json": "application/json", ".txt": "text/plain; charset=utf-8", ".csv": "text/csv; charset=utf-8"}


def _run_of(study, value: Any) -> AnalysisRun | None:
    pk = parse_id(value)
    return AnalysisRun.objects.filter(pk=pk, study=study).first() if pk else None


def run_status(run: AnalysisRun) -> dict[str, Any]:
    stage = LOST_STAGE if run.worker_lost() else run.stage  # "worker lost, restarting" (issue 41)
    # whole percents: the page renders this number as the script does ("0", not "0.0" then "0")
    return {"run": run.pk, "state": run.state, "stage": stage, "percent": round(run.percent),
            "finished": run.finished, "error": run.error if run.state == AnalysisRun.State.FAILED else ""}


def key_numbers(results: dict | None) -> dict[str, list]:
    """The tables that follow the headline (``analysis.tables.headline``, the population's P % point per condition): the
    pooled curves' thresholds with CIs, MOS, pairwise scales, the predictor ranking."""
    results = results or {}
    thresholds = []
    for entry in results.get("psychometric") or []:
        for c in [*(entry.get("conditions") or []), *([entry["pooled"]] if entry.get("pooled") else [])]:
            ci = c.get("threshold_ci_95") or [None, None]
            thresholds.append({"block": entry.get("block"), "level": entry.get("level_name") or "",
                               "unit": entry.get("unit") or "", "condition": c.get("condition"),
                               "threshold": c.get("threshold"), "ci_low": ci[0], "ci_high": ci[1],
                               "n": c.get("n_trials"), "beyond": c.get("beyond_levels") or ""})
    mos = [{"block": e.get("block"), **r} for e in results.get("ratings") or [] for r in e.get("mos") or []]
    straight_liners = [{"block": e.get("block"), **f} for e in results.get("ratings") or []
                       for f in e.get("straight_liners") or []]
    scale = [{"block": e.get("block"), "compare": e.get("compare") or "", **r}
             for e in results.get("pairwise") or [] for r in e.get("thurstone") or []]
    preferences = [{"block": e.get("block"), **p} for e in results.get("pairwise") or []
                   for p in e.get("preferences") or []]
    predictors = predictor_rows(results)
    return {"thresholds": thresholds, "mos": mos, "scale": scale, "preferences": preferences,
            "predictors": predictors, "straight_liners": straight_liners}


@never_cache
@with_study("view")
def analysis_page(request: HttpRequest, study) -> HttpResponse:
    run = _run_of(study, request.GET["run"]) if request.GET.get("run") else study.analysis_runs.first()
    if request.GET.get("run") and run is None:
        raise Http404("no such analysis run")
    files = list(run.files.all()) if run is not None and run.state == AnalysisRun.State.DONE else []
    figures = [f for f in files if f.kind == "figure" and f.name.endswith(".svg")]
    results = run.results if run is not None and run.state == AnalysisRun.State.DONE else None
    return render(request, "dashboard/results.html", {
        "study": study, "run": run, "status": run_status(run) if run else None,
        "runs": list(study.analysis_runs.all()[:10]), "files": files, "figures": figures, "results": results,
        "numbers": key_numbers(results), "headline": headline.rows(results),
        "can_run": access.can(study.role, "edit"),
        "stage_labels": [(key, str(label)) for key, label in messages.STAGE_LABELS.items()],
        "stage_label": messages.stage_label(run_status(run)["stage"]) if run else "",
        "run_error": messages.error_text(run.error) if run and run.error else "",
        "ws_path": f"/ws/dashboard/{study.slug}/analysis/{run.pk}/" if run else ""})


@with_study("edit", ("POST",))
def analysis_start(request: HttpRequest, study) -> HttpResponse:
    run = services.analysis_request(study=study, by=request.user, force=request.POST.get("force") == "1",
                                    language=getattr(request, "LANGUAGE_CODE", ""))
    return redirect(reverse("dashboard:analysis", kwargs={"slug": study.slug}) + f"?run={run.pk}")


@with_study("edit", ("POST",))
def analysis_cancel(request: HttpRequest, study) -> HttpResponse:
    run = _run_of(study, request.POST.get("run"))
    if run is None:
        raise Http404("no such analysis run")
    services.analysis_cancel(run=run)
    return redirect(reverse("dashboard:analysis", kwargs={"slug": study.slug}) + f"?run={run.pk}")


@never_cache
@with_study("view")
def analysis_status(request: HttpRequest, study) -> JsonResponse:
    """The run's state, stage and percent: the page's fallback when the websocket is quiet."""
    run = _run_of(study, request.GET.get("run"))
    if run is None:
        raise Http404("no such analysis run")
    return JsonResponse(run_status(run))


@csp_replace({"style-src": [SELF, "'unsafe-inline'"], "script-src": [NONE], "img-src": [SELF, "data:"]})
@with_study("view")
def analysis_file(request: HttpRequest, study) -> FileResponse:
    """A file of a finished run (figure, report, results): only names the run recorded, never a path."""
    return _serve_file(request, study, _run_of(study, request.GET.get("run")), request.GET.get("name", ""))


@csp_replace({"style-src": [SELF, "'unsafe-inline'"], "script-src": [NONE], "img-src": [SELF, "data:"]})
@with_study("view")
def analysis_run_file(request: HttpRequest, study, run: int, name: str) -> FileResponse:
    """The same files at a path (``run/<id>/report.html``), so the report's relative links to ``figures/...``
    resolve to this run's figures when it is opened from the dashboard."""
    return _serve_file(request, study, _run_of(study, run), name)


def _serve_file(request: HttpRequest, study, run: AnalysisRun | None, name: str) -> FileResponse:
    if run is None or not AnalysisFile.objects.filter(run=run, name=name).exists():
        raise Http404("no such file")
    path = services.run_dir(run) / name
    if not path.is_file():
        raise Http404("no such file")
    suffix = path.suffix.lower()
    response = FileResponse(path.open("rb"), content_type=TYPES.get(suffix) or mimetypes.guess_type(path.name)[0]
                            or "application/octet-stream",
                            as_attachment=request.GET.get("download") == "1",
                            filename=f"{study.slug}-run{run.pk}-{path.name}")
    response["X-Content-Type-Options"] = "nosniff"
    return response


def _frames(study):
    trials, participants = snapshot.read_frames(study)
    return trials, participants, exclusions.rules_of(study.spec)


@never_cache
@with_study("view")
def export_zip(request: HttpRequest, study) -> HttpResponse:
    """The tidy export (trials, participants, codebook, exclusion report) as a zip, made now from the database."""
    trials, participants, rules = _frames(study)
    data = exporting.archive(trials, participants, rules, include_excluded=request.GET.get("include_excluded") == "1",
                             title=study.slug, spec=study.spec)
    response = HttpResponse(data, content_type="application/zip")
    response["Content-Disposition"] = f'attachment; filename="{study.slug}-export.zip"'
    return response


@never_cache
@with_study("view")
def codebook_csv(request: HttpRequest, study) -> HttpResponse:
    """Every column of both tables with its type, unit and meaning."""
    trials, participants, _rules = _frames(study)
    book = exporting.codebook_frame(trials, participants, study.spec)
    response = HttpResponse(book.to_csv(index=False), content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{study.slug}-codebook.csv"'
    return response
