"""Playback sockets never take a channel on the channel layer (only dashboard sockets do): see
tests/faults/test_playback_without_redis.py for the same with a real Daphne and a Redis that goes down."""

from channels.layers import get_channel_layer

from dashboard.consumers.live import DashboardConsumer
from pacelab.routing import websocket_urlpatterns
from playback.consumers.clock import ClockConsumer
from playback.consumers.playback import PlaybackConsumer


def test_playback_consumers_have_no_channel_layer():
    for consumer in (PlaybackConsumer, ClockConsumer):
        assert get_channel_layer(consumer.channel_layer_alias) is None, consumer


def test_only_dashboard_sockets_use_the_channel_layer():
    users = {p.callback.consumer_class for p in websocket_urlpatterns
             if get_channel_layer(p.callback.consumer_class.channel_layer_alias) is not None}
    assert DashboardConsumer in users
    assert all(c.__module__.startswith("dashboard.") for c in users), users
