"""Websocket consumers of playback.

``ClockConsumer`` answers NTP-style pings so a client can relate its clock to the server's: the client sends
``{"type": "ping", "id": n, "t0": client_ms}``, the server answers with its receive and send times; the round
with the smallest round trip gives the offset and its uncertainty (half that round trip).
"""

from __future__ import annotations

import json
import time

from channels.generic.websocket import WebsocketConsumer

PROTOCOL_VERSION = 1


def server_ms() -> float:
    """Wall-clock milliseconds since the epoch (comparable across machines once offsets are known)."""
    return time.time_ns() / 1e6


class ClockConsumer(WebsocketConsumer):
    channel_layer_alias = None  # never on Redis (see PlaybackConsumer)

    def connect(self) -> None:
        self.accept()
        self.send(text_data=json.dumps({"type": "hello", "protocol": PROTOCOL_VERSION, "t_server": server_ms()}))

    def receive(self, text_data: str | None = None, bytes_data: bytes | None = None) -> None:
        t1 = server_ms()
        try:
            msg = json.loads(text_data) if text_data is not None else None
        except ValueError as exc:
            self._error(f"malformed JSON: {exc}")
            return
        if not isinstance(msg, dict):
            self._error("message must be a JSON object")
            return
        if msg.get("type") != "ping":
            self._error(f"unknown message type {msg.get('type')!r}; expected 'ping'")
            return
        t0 = msg.get("t0")
        if not isinstance(t0, int | float) or isinstance(t0, bool):
            self._error("ping.t0: must be a number (client time in ms)")
            return
        self.send(text_data=json.dumps({"type": "pong", "id": msg.get("id"), "t0": t0, "t1": t1, "t2": server_ms()}))

    def _error(self, message: str) -> None:
        self.send(text_data=json.dumps({"type": "error", "error": message}))
