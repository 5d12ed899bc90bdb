"""Delivery records: a playback (one presentation of a stream to one browser) and the paint logs it sent back.

A playback is driven over the websocket by presenting its unguessable token; when it has an owner or a
participant-session key, the socket must also belong to that user or session. Paint batches are unique per
playback and batch number, so a batch retried after a lost acknowledgement is stored once and acknowledged again.
"""

import secrets

from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _


def new_playback_token() -> str:
    return secrets.token_urlsafe(32)


class Playback(models.Model):
    class Mode(models.TextChoices):
        PREFETCH = "prefetch", _("Prefetch (the browser paces the whole schedule)")
        LIVE = "live", _("Live (the server paces each frame)")

    token = models.CharField(max_length=64, unique=True, default=new_playback_token, editable=False)
    stimulus = models.ForeignKey("playback.Stimulus", null=True, blank=True, on_delete=models.SET_NULL)
    stream = models.JSONField()
    mode = models.CharField(max_length=8, choices=Mode.choices, default=Mode.PREFETCH)
    config = models.JSONField(default=dict, blank=True)
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.CASCADE)
    session_key = models.CharField(max_length=64, blank=True, db_index=True)
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    ended_at = models.DateTimeField(null=True, blank=True)
    end_reason = models.CharField(max_length=32, blank=True)
    pacing = models.JSONField(default=dict, blank=True)

    class Meta:
        ordering = ["id"]

    def __str__(self) -> str:
        return f"playback {self.pk} ({self.mode})"


class PaintReport(models.Model):
    playback = models.ForeignKey(Playback, on_delete=models.CASCADE, related_name="paint_reports")
    batch = models.PositiveIntegerField()
    entries = models.JSONField()
    clock_offset_ms = models.FloatField(null=True, blank=True)
    clock_uncertainty_ms = models.FloatField(null=True, blank=True)
    clock_rtt_ms = models.FloatField(null=True, blank=True)
    received_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["playback", "batch"]
        constraints = [models.UniqueConstraint(fields=["playback", "batch"], name="paintreport_unique_batch")]

    def __str__(self) -> str:
        return f"paint batch {self.batch} of playback {self.playback_id}"
