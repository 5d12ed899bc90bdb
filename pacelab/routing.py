"""Websocket routes of every app."""

from django.urls import path

from dashboard.consumers.analysis import AnalysisProgressConsumer
from dashboard.consumers.live import DashboardConsumer
from playback.consumers.clock import ClockConsumer
from playback.consumers.playback import PlaybackConsumer

websocket_urlpatterns = [
    path("ws/clock/", ClockConsumer.as_asgi()),
    path("ws/playback/", PlaybackConsumer.as_asgi()),
    path("ws/dashboard/<slug:slug>/", DashboardConsumer.as_asgi()),
    path("ws/dashboard/<slug:slug>/analysis/<int:run>/", AnalysisProgressConsumer.as_asgi()),
]
