"""Notifications of analysis progress for live views (the dashboard), sent after the commit.

The ``AnalysisRun`` row is the record; these only say "look again" and may be lost (the channel layer is
at-most-once), so a live view also polls the row. Group ``analysis.<run id>``, message type ``analysis.progress``.
"""

from __future__ import annotations

import logging

from django.db import transaction

log = logging.getLogger("pacelab")


def run_group(run_id: int) -> str:
    return f"analysis.{run_id}"


def _send(run_id: int, message: dict) -> None:
    from asgiref.sync import async_to_sync
    from channels.layers import get_channel_layer

    layer = get_channel_layer()
    if layer is None:
        return
    try:
        async_to_sync(layer.group_send)(run_group(run_id), {"type": "analysis.progress", "run": run_id, **message})
    except Exception as exc:  # noqa: BLE001 - a lost notification must never fail the analysis
        log.warning("analysis %s progress notification not sent: %s", run_id, exc)


def analysis_progress(run_id: int, *, state: str, stage: str = "", percent: float = 0.0) -> None:
    """Tell live views of run ``run_id`` its state, stage and percent, once the current transaction commits."""
    message = {"state": state, "stage": stage, "percent": percent}
    transaction.on_commit(lambda: _send(run_id, message))
