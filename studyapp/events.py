"""Notifications that a study's data changed, for live views (the dashboard).

The database is the record; these only say "look again". They are sent after the commit and may be lost
(the channel layer is at-most-once): a live view also refreshes on its own timer and on reconnect.
"""

from __future__ import annotations

import logging

from django.db import transaction

log = logging.getLogger("studyapp")


def study_group(study_id: int) -> str:
    return f"study.{study_id}"


def _send(study_id: int) -> None:
    from asgiref.sync import async_to_sync
    from channels.layers import get_channel_layer

    layer = get_channel_layer()
    if layer is None:
        return
    try:
        async_to_sync(layer.group_send)(study_group(study_id), {"type": "study.changed", "study": study_id})
    except Exception as exc:  # noqa: BLE001 - a lost notification must never fail the participant's request
        log.warning("study %s change notification not sent: %s", study_id, exc)


def study_changed(study_id: int) -> None:
    """Tell live views of ``study_id`` to re-read, once the current transaction commits."""
    transaction.on_commit(lambda: _send(study_id))
