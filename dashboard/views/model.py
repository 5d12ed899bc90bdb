"""The results page's "Download the perception model": the run's model file (``analysis.stats.perception_model``), as
``manage.py export_model`` writes it. A thin shell over ``analysis.model_export``; a viewer of the study may
download it (it holds the same numbers as the results page)."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.utils.translation import gettext as _
from django.views.decorators.cache import never_cache

from analysis.model_export import NoModel, finished_run, model_for
from analysis.stats import perception_model
from dashboard.selectors.participants import parse_id
from dashboard.views.studies import with_study


@never_cache
@with_study("view")
def model_json(request: HttpRequest, study) -> HttpResponse:
    run_id = parse_id(request.GET.get("run")) if request.GET.get("run") else None
    try:
        run = finished_run(study, run_id)
        model = model_for(study, run)
    except NoModel:
        return HttpResponse(_("This study has no finished analysis run to export a model from."), status=404,
                            content_type="text/plain; charset=utf-8")
    except perception_model.ModelFileError as exc:
        return HttpResponse(_("No perception model can be exported from this run: %(why)s") % {"why": exc},
                            status=409, content_type="text/plain; charset=utf-8")
    response = HttpResponse(perception_model.dumps(model), content_type="application/json")
    response["Content-Disposition"] = f'attachment; filename="{study.slug}-run{run.pk}-model.json"'
    return response
