"""Dashboard URLs (under /dashboard/). Every route with a ``slug`` goes through ``access.study_for``;
tests/dashboard/test_access.py walks this list, so a new route is checked for isolation automatically."""

from django.urls import path

from dashboard import views as v

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
]
