"""The live dashboard socket: pushes a study's snapshot when its data change.

The socket only carries "look again": ``studyapp.events`` sends ``study.changed`` to the group ``study.<id>``
after each commit, and this consumer re-reads the snapshot from the database (one ``database_sync_to_async``
call per snapshot) and sends it. Notifications are coalesced: at most one snapshot per ``MIN_INTERVAL_S``, and a
change that arrives while a snapshot is being read triggers one more. The channel layer may drop messages, so
the client also sends ``{"type": "refresh"}`` on a timer and after reconnecting.

A user without access to the study (or anonymous) is accepted and closed at once with code 4404, the same as
for a study that does not exist. Access is checked again with every snapshot, so a revoked role ends the feed.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncWebsocketConsumer

from dashboard import access
from dashboard.selectors import studies as selectors
from studyapp.events import study_group
from studyapp.models import Study

log = logging.getLogger("dashboard")
MIN_INTERVAL_S = 0.25  # at most ~4 snapshots per second per socket
REFUSED = 4404


def _snapshot(user, slug: str) -> dict | None:
    """The snapshot, or ``None`` if the user may no longer see the study."""
    study_id = access.study_id_for_socket(user, slug)
    if study_id is None:
        return None
    return selectors.study_snapshot(Study.objects.get(pk=study_id))


class DashboardConsumer(AsyncWebsocketConsumer):
    async def connect(self) -> None:
        self.slug = self.scope["url_route"]["kwargs"]["slug"]
        self.group = None
        self.dirty = False
        self.last_sent = 0.0
        self.task: asyncio.Task | None = None
        await self.accept()
        study_id = await database_sync_to_async(access.study_id_for_socket)(self.scope.get("user"), self.slug)
        if study_id is None:
            await self.close(code=REFUSED)
            return
        self.group = study_group(study_id)
        await self.channel_layer.group_add(self.group, self.channel_name)
        self._request()

    async def disconnect(self, code: int) -> None:
        task, self.task = self.task, None
        if task is not None:
            task.cancel()
        if self.group is not None:
            await self.channel_layer.group_discard(self.group, self.channel_name)
            self.group = None

    async def receive(self, text_data: str | None = None, bytes_data: bytes | None = None) -> None:
        try:
            msg = json.loads(text_data or "")
        except ValueError:
            msg = None
        if not isinstance(msg, dict) or msg.get("type") != "refresh":
            await self.send(text_data=json.dumps({"type": "error", "message": 'expected {"type": "refresh"}'}))
            return
        if self.group is not None:
            self._request()

    async def study_changed(self, event: dict) -> None:
        self._request()

    def _request(self) -> None:
        """Mark the view stale; one sender task at a time sends snapshots until it is fresh."""
        self.dirty = True
        if self.task is None or self.task.done():
            self.task = asyncio.ensure_future(self._send_while_dirty())

    async def _send_while_dirty(self) -> None:
        while self.dirty and self.group is not None:
            wait = self.last_sent + MIN_INTERVAL_S - time.monotonic()
            if wait > 0:
                await asyncio.sleep(wait)
            self.dirty = False
            try:
                snapshot = await database_sync_to_async(_snapshot)(self.scope.get("user"), self.slug)
            except Exception as exc:  # noqa: BLE001 - the database may be restarting: the next refresh retries
                log.warning("dashboard snapshot of %s failed: %s", self.slug, exc)
                return
            if self.group is None:
                return
            if snapshot is None:
                await self.close(code=REFUSED)
                return
            self.last_sent = time.monotonic()
            await self.send(text_data=json.dumps(snapshot))
