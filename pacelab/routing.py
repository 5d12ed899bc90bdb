"""Websocket routes of every app."""

from django.urls import path

from playback.consumers import ClockConsumer

websocket_urlpatterns = [
    path("ws/clock/", ClockConsumer.as_asgi()),
]
