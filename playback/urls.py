from django.urls import path

from playback import views

app_name = "playback"
urlpatterns = [
    path("", views.stream_list, name="list"),
    path("traces/<int:pk>/", views.trace_detail, name="trace"),
]
