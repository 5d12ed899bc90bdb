"""Websocket routes of every app."""

from django.urls import path

from dashboard.consumers import DashboardConsumer
from dashboard.consumers_analysis import AnalysisProgressConsumer
from playback.consumers import ClockConsumer
from playback.playback_consumer import PlaybackConsumer

websocket_urlpatterns = [
    path("ws/clock/", ClockConsumer.as_asgi()),
    path("ws/playback/", PlaybackConsumer.as_asgi()),
    path("ws/dashboard/<slug:slug>/", DashboardConsumer.as_asgi()),
    path("ws/dashboard/<slug:slug>/analysis/<int:run>/", AnalysisProgressConsumer.as_asgi()),
]
