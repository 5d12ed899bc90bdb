"""The playback websocket (protocol in docs/protocol.md): binds a playback by token, delivers its frames as a
schedule (prefetch) or paced one by one (live), answers clock pings and stores paint batches.

A thin shell: ``playback.core.protocol`` validates and orders messages, ``playback.core.live_pacer`` paces (by
default the process's shared pacer, which calls this consumer's ``_send_frame`` when each frame is due), services
write. The ORM runs off the event loop, one ``database_sync_to_async`` call per message. Live frames are sent by
this consumer (never through the channel layer), and live pacing is stopped on ``stop`` and on disconnect and
stops by itself once the socket is closed.
"""

from __future__ import annotations

import os
import time
from collections.abc import Awaitable
from typing import Any

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncWebsocketConsumer
from django.conf import settings
from django.db import DatabaseError

from pacelab import ws_fast_send
from playback.core import live_pacer, pacer, protocol
from playback.services import delivery as services

FAST_SEND = ws_fast_send.EXTENSION  # a socket's direct frame writer, offered under Daphne
_FRAME_TAIL, _FRAME_TAIL_LEN = protocol.FRAME_TAIL, protocol.FRAME_TAIL_LEN


def server_ms() -> float:
    """Wall-clock milliseconds since the epoch (the ``t1``/``t2`` of pongs and the ``sent_ms`` of frames)."""
    return time.time_ns() / 1e6


def test_hooks_enabled() -> bool:
    """The ``debug`` message (live pacing-task count) exists only under DEBUG or ``PACELAB_TEST_HOOKS=1``."""
    return bool(settings.DEBUG) or os.environ.get("PACELAB_TEST_HOOKS") == "1"


def _bind(token: str, user: Any, session_key: str | None, prepare: bool = False):
    """The playback, its frames and, for a live playback on a socket with the short write path (``prepare``),
    its frames as websocket frames. Frames are ``Frame`` objects for prefetch, ``LiveFrames`` for live pacing;
    everything is encoded here, in the worker thread, never on the event loop."""
    playback = services.playback_for_socket(token=token, user=user, session_key=session_key)
    if playback is None:
        return None, [], None
    frames = protocol.frames_of_stored(playback.stream)
    # The stored stream (thousands of small lists) is not kept for the socket's life: the frames hold it all,
    # and fewer long-lived objects keep the collector's full passes short. Deleting a field makes it deferred.
    del playback.stream
    if playback.mode != "live":
        return playback, frames, None
    live = protocol.LiveFrames.of(frames)
    if not prepare:
        return playback, live, None
    # Each frame's websocket bytes, header included, up to the fixed-width send-time tail: a due frame is then
    # one write (``FrameWriter.send_prepared``). They replace the text heads (kept once, not twice).
    wire = [ws_fast_send.prepared_frame(h.encode(), protocol.FRAME_TAIL_LEN) for h in live.heads]
    return playback, protocol.LiveFrames(t_ms=live.t_ms, heads=[]), wire


def _deliver_prefetch(playback) -> None:
    services.playback_started(playback=playback)
    services.playback_ended(playback=playback, reason="delivered")


class PlaybackConsumer(AsyncWebsocketConsumer):
    # Never on the channel layer: Channels would otherwise give every socket a channel on Redis and read it for
    # the socket's whole life, so a Redis restart closed every playback socket with 1011, idle ones included
    # (issue 41). Nothing is ever sent to a playback socket from outside: only the dashboard's sockets join it.
    channel_layer_alias = None

    async def connect(self) -> None:
        self.session = protocol.Session()
        self.playback = None
        self.frames: list[protocol.Frame] | protocol.LiveFrames = []
        self.wire: list[bytes] | None = None  # live frames prepared for the short write path
        self.task: live_pacer.Handle | None = None
        self.result: pacer.PaceResult | None = None
        self.closed = False
        # Daphne's short write path for this socket's frames, when the server offers it (pacelab/ws_fast_send.py).
        self.fast_send = (self.scope.get("extensions") or {}).get(FAST_SEND)
        await self.accept()

    async def disconnect(self, code: int) -> None:
        self.closed = True
        task, self.task = self.task, None
        await live_pacer.stop(task)
        if task is not None and self.session.state == "running" and self.playback is not None:
            self.session.ended()
            await database_sync_to_async(services.playback_ended)(
                playback=self.playback, reason="disconnected", result=self.result)

    async def receive(self, text_data: str | None = None, bytes_data: bytes | None = None) -> None:
        t1 = server_ms()
        try:
            msg = protocol.parse(text_data, allow_debug=test_hooks_enabled())
            self.session.check(msg)
        except protocol.ProtocolError as exc:
            await self.send(text_data=protocol.error_msg(str(exc)))
            return
        if isinstance(msg, protocol.Ping):
            await self.send(text_data=protocol.pong_msg(msg, t1=t1, t2=server_ms()))
        elif isinstance(msg, protocol.Debug):
            fast = self.fast_send
            await self.send(text_data=protocol.debug_msg(
                live_tasks=live_pacer.live_count(), fast_frames=None if fast is None else fast.fast,
                fallback_frames=None if fast is None else fast.fallback))
        elif isinstance(msg, protocol.Hello):
            await self._hello(msg)
        elif isinstance(msg, protocol.Start):
            await self._start()
        elif isinstance(msg, protocol.Stop):
            await self._stop()
        elif isinstance(msg, protocol.Paint):
            await self._paint(msg)

    async def _hello(self, msg: protocol.Hello) -> None:
        session = self.scope.get("session")
        try:
            playback, frames, wire = await database_sync_to_async(_bind)(
                msg.token, self.scope.get("user"), getattr(session, "session_key", None), self.fast_send is not None)
        except DatabaseError:
            await self.send(text_data=protocol.error_msg("hello: the server could not look up the playback; "
                                                         "send hello again"))
            return
        if playback is None:
            await self.send(text_data=protocol.error_msg("hello: unknown playback"))
            return
        self.session.bind()
        self.playback, self.frames, self.wire = playback, frames, wire
        config = {k: v for k, v in playback.config.items() if k != "pacer"}
        await self.send(text_data=protocol.ready_msg(
            mode=playback.mode, config=config, frames=len(frames), t_server=server_ms()))

    async def _start(self) -> None:
        self.session.started()
        if self.playback.mode == "prefetch":
            self.session.ended()
            for part in protocol.schedule_msgs(self.frames, t_server=server_ms()):
                await self.send(text_data=part)
            await database_sync_to_async(_deliver_prefetch)(self.playback)
            await self.send(text_data=protocol.end_msg(reason="complete", frames=len(self.frames),
                                                       sent=len(self.frames)))
            return
        self.result = pacer.PaceResult()
        self.task = live_pacer.start(
            self.frames.t_ms, self._send_frame, is_open=lambda: not self.closed,
            pacer=self.playback.config.get("pacer", pacer.DEFAULT_PACER), result=self.result,
            on_done=self._live_done)
        # Recorded once pacing runs, so the write never delays the first frame's deadline.
        await database_sync_to_async(services.playback_started)(playback=self.playback)

    def _send_frame(self, seq: int, late_ms: float) -> Awaitable[None] | None:
        # Under Daphne the prepared frame and its tail go to the socket in one write and nothing is returned (the
        # pacer's fastest case). Otherwise, or when that path does not apply to the connection now (or the tail
        # did not fit its fixed width), the message as text: through the fast path's general case, else through
        # ``base_send``, what ``self.send(text_data=...)`` ends in, its coroutine returned as it is (the pacer
        # runs it).
        tail = _FRAME_TAIL % (time.time_ns() / 1e6, late_ms)
        wire = self.wire
        if wire is not None and len(tail) == _FRAME_TAIL_LEN and self.fast_send.send_prepared(wire[seq], tail):
            return None
        head = self.frames.heads[seq] if wire is None else ws_fast_send.prepared_payload(wire[seq]).decode()
        text = head + tail.decode()
        if self.fast_send is not None:
            sent = self.fast_send.send_text(text)
            if sent is not None:
                return sent
        return self.base_send({"type": "websocket.send", "text": text})

    async def _live_done(self, result: pacer.PaceResult) -> None:
        if self.closed or result.reason != "complete":
            return  # disconnect() records the end
        self.session.ended()
        await database_sync_to_async(services.playback_ended)(playback=self.playback, reason="complete",
                                                              result=result)
        await self.send(text_data=protocol.end_msg(reason="complete", frames=len(self.frames), sent=result.sent))

    async def _stop(self) -> None:
        task, self.task = self.task, None
        await live_pacer.stop(task)
        self.session.ended()
        await database_sync_to_async(services.playback_ended)(playback=self.playback, reason="stopped",
                                                              result=self.result)
        sent = self.result.sent if self.result else 0
        await self.send(text_data=protocol.end_msg(reason="stopped", frames=len(self.frames), sent=sent))

    async def _paint(self, msg: protocol.Paint) -> None:
        try:
            ack = await database_sync_to_async(services.paint_batch_record)(
                playback=self.playback, batch=msg.batch, entries=msg.entries, clock=msg.clock)
        except DatabaseError:
            await self.send(text_data=protocol.error_msg(f"paint: batch {msg.batch} was not stored; send it again"))
            return
        self.session.painted(msg.batch)
        await self.send(text_data=protocol.ack_msg(**ack))
