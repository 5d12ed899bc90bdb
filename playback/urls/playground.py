"""The designer playground, mounted at /playground/ (docs/playground.md)."""

from django.urls import path

from playback.views import playground as views

app_name = "playground"
urlpatterns = [
    path("", views.playground_page, name="page"),
    path("playbacks/", views.playground_playbacks, name="playbacks"),
    path("fidelity/<str:token>/", views.playground_fidelity, name="fidelity"),
    path("save/", views.playground_save, name="save"),
]
