from django.urls import path

from studyapp.views import participant as v

urlpatterns = [
    path("s/<slug:slug>/", v.enter, name="enter"),
    path("s/<slug:slug>/declined/", v.declined, name="declined"),
    path("s/<slug:slug>/resume", v.resume, name="resume"),
    path("p/<str:token>/", v.participant, name="participant"),
    path("p/<str:token>/step.json", v.step_json, name="step_json"),
    path("p/<str:token>/submit", v.submit, name="submit"),
    path("p/<str:token>/withdraw", v.withdraw, name="withdraw"),
]
