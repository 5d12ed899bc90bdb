"""Live progress of one analysis run: ``ws/dashboard/<slug>/analysis/<run>/``.

On connect the consumer checks access (``access.study_for`` with ``view``, and the run must belong to that study),
sends the run's state read from the database, and joins the group ``analysis.<run>``; ``analysis.events`` sends
``analysis.progress`` to it after each commit. Those notifications may be lost (the channel layer is
at-most-once), so the page also polls ``status.json``, and ``{"type": "refresh"}`` makes the consumer read the
row again. Messages out: ``{"type": "progress", "run", "state", "stage", "percent", "finished", "error"}``.

A stranger, an anonymous visitor or a run of another study: accepted and closed at once with code 4404, the same
for a run that does not exist.
"""

from __future__ import annotations

import json
import logging

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncWebsocketConsumer

from analysis.events import run_group
from analysis.models import AnalysisRun
from dashboard import access

log = logging.getLogger("dashboard")
REFUSED = 4404


def _status(user, slug: str, run_id: int) -> dict | None:
    """The run's status for a user who may view its study, else ``None``."""
    from dashboard.views.results import run_status

    study_id = access.study_id_for_socket(user, slug)
    if study_id is None:
        return None
    run = AnalysisRun.objects.filter(pk=run_id, study_id=study_id).first()
    return None if run is None else {"type": "progress", **run_status(run)}


class AnalysisProgressConsumer(AsyncWebsocketConsumer):
    async def connect(self) -> None:
        kwargs = self.scope["url_route"]["kwargs"]
        self.slug, self.run_id, self.group = kwargs["slug"], int(kwargs["run"]), None
        await self.accept()
        status = await self._read()
        if status is None:
            await self.close(code=REFUSED)
            return
        self.group = run_group(self.run_id)
        await self.channel_layer.group_add(self.group, self.channel_name)
        await self.send(text_data=json.dumps(status))

    async def disconnect(self, code: int) -> None:
        if self.group is not None:
            await self.channel_layer.group_discard(self.group, self.channel_name)
            self.group = None

    async def _read(self) -> dict | None:
        return await database_sync_to_async(_status)(self.scope.get("user"), self.slug, self.run_id)

    async def receive(self, text_data: str | None = None, bytes_data: bytes | None = None) -> None:
        try:
            msg = json.loads(text_data or "")
        except ValueError:
            msg = None
        if not isinstance(msg, dict) or msg.get("type") != "refresh":
            await self.send(text_data=json.dumps({"type": "error", "message": 'expected {"type": "refresh"}'}))
            return
        await self._resend()

    async def analysis_progress(self, event: dict) -> None:
        """A notification: pass the numbers on at once (they came from the committed row)."""
        state = event.get("state", "")
        await self.send(text_data=json.dumps({
            "type": "progress", "run": self.run_id, "state": state, "stage": event.get("stage", ""),
            "percent": round(float(event.get("percent") or 0.0), 1),
            "finished": state in AnalysisRun.FINISHED, "error": ""}))
        if state in AnalysisRun.FINISHED:
            await self._resend()  # the final row (error text, exact numbers), and access checked again

    async def _resend(self) -> None:
        try:
            status = await self._read()
        except Exception as exc:  # noqa: BLE001 - the database may be restarting: the page's poll carries on
            log.warning("analysis status of run %s failed: %s", self.run_id, exc)
            return
        if status is None:
            await self.close(code=REFUSED)
            return
        await self.send(text_data=json.dumps(status))
