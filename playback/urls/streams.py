from django.urls import path

from playback.views import player as views_player
from playback.views import streams as views

app_name = "playback"
urlpatterns = [
    path("", views.stream_list, name="list"),
    path("traces/<int:pk>/", views.trace_detail, name="trace"),
    path("player-test/", views_player.player_test, name="player_test"),
]
