"""Dashboard URLs (under /dashboard/). Every route with a ``slug`` goes through ``access.study_for``;
tests/dashboard/test_access.py walks this list, so a new route is checked for isolation automatically."""

from django.urls import path

from dashboard.views import model as vm
from dashboard.views import participants as vp
from dashboard.views import plan as vpl
from dashboard.views import results as vr
from dashboard.views import review as vv
from dashboard.views import studies as v

app_name = "dashboard"
urlpatterns = [
    path("", v.study_list, name="list"),
    path("new/", v.study_create, name="create"),
    path("<slug:slug>/", v.study_detail, name="detail"),
    path("<slug:slug>/edit/", v.study_edit, name="edit"),
    path("<slug:slug>/state/", v.study_state, name="state"),
    path("<slug:slug>/copy/", v.study_copy, name="copy"),
    path("<slug:slug>/share/", v.study_share, name="share"),
    path("<slug:slug>/preview/", v.study_preview, name="preview"),
    path("<slug:slug>/snapshot.json", v.study_snapshot_json, name="snapshot"),
    path("<slug:slug>/study.yaml", v.study_spec_yaml, name="spec"),
    # participants, replay and payments (ids as query parameters: ?id=, ?trial=&position=)
    path("<slug:slug>/participants/", vp.participants, name="participants"),
    path("<slug:slug>/participant/", vp.participant, name="participant"),
    path("<slug:slug>/replay/", vp.replay_page, name="replay"),
    path("<slug:slug>/replay.json", vp.replay_json, name="replay_data"),
    path("<slug:slug>/quality/", vv.quality, name="quality"),
    path("<slug:slug>/quality/decide/", vv.decide, name="decide"),
    path("<slug:slug>/payments.csv", vv.payments_csv, name="payments"),
    path("<slug:slug>/bonuses.csv", vv.bonuses_csv, name="bonuses"),
    path("<slug:slug>/reconcile/", vv.reconcile_page, name="reconcile"),
    # analysis: run with live progress, results, downloads (?run=)
    path("<slug:slug>/analysis/", vr.analysis_page, name="analysis"),
    path("<slug:slug>/analysis/start/", vr.analysis_start, name="analysis_start"),
    path("<slug:slug>/analysis/cancel/", vr.analysis_cancel, name="analysis_cancel"),
    path("<slug:slug>/analysis/status.json", vr.analysis_status, name="analysis_status"),
    path("<slug:slug>/analysis/file/", vr.analysis_file, name="analysis_file"),
    path("<slug:slug>/analysis/run/<int:run>/<path:name>", vr.analysis_run_file, name="analysis_run_file"),
    path("<slug:slug>/analysis/model.json", vm.model_json, name="perception_model"),
    # planner: expected headline intervals per participant count, computed in the background
    path("<slug:slug>/plan/", vpl.plan_page, name="plan"),
    path("<slug:slug>/plan/start/", vpl.plan_start, name="plan_start"),
    path("<slug:slug>/plan/status.json", vpl.plan_status_json, name="plan_status"),
    path("<slug:slug>/export.zip", vr.export_zip, name="export"),
    path("<slug:slug>/codebook.csv", vr.codebook_csv, name="codebook"),
]
