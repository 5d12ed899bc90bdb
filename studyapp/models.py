"""Studies, participant sessions, their planned trials and their answers.

The database is the record: a session's position (``step``) is decided and stored by the server; each answer
carries a client-generated id (unique per session), so a retried answer is acknowledged again and stored once.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils.translation import gettext_lazy as _


class Study(models.Model):
    class State(models.TextChoices):
        DRAFT = "draft", _("Draft")
        OPEN = "open", _("Open")
        PAUSED = "paused", _("Paused")
        CLOSED = "closed", _("Closed")

    slug = models.SlugField(max_length=80, unique=True)
    title = models.CharField(max_length=300)
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="owned_studies")
    state = models.CharField(max_length=8, choices=State.choices, default=State.DRAFT)
    spec = models.JSONField(help_text="the validated study file")
    spec_hash = models.CharField(max_length=64)
    version = models.PositiveIntegerField(default=1)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        verbose_name_plural = "studies"
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return self.slug


class StudyMember(models.Model):
    """A collaborator on a study (the owner is implicit)."""

    class Role(models.TextChoices):
        EDITOR = "editor", _("Editor")
        VIEWER = "viewer", _("Viewer")

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="members")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE)
    role = models.CharField(max_length=8, choices=Role.choices)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["study", "user"], name="member_once_per_study")]


class Session(models.Model):
    """One participant in one study."""

    class State(models.TextChoices):
        ACTIVE = "active", _("In progress")
        COMPLETED = "completed", _("Completed")
        SCREENED_OUT = "screened_out", _("Screened out")
        RETURNED = "returned", _("Returned")
        TIMED_OUT = "timed_out", _("Timed out")
        WITHDRAWN = "withdrawn", _("Withdrawn")
        DECLINED = "declined", _("Declined consent")

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="sessions")
    token = models.CharField(max_length=64, unique=True)
    panel_pid = models.CharField(max_length=128, null=True, blank=True)  # noqa: DJ001 - NULL: no panel id
    panel_study_id = models.CharField(max_length=128, blank=True)
    panel_session_id = models.CharField(max_length=128, blank=True)
    group = models.CharField(max_length=64, blank=True)
    seed = models.BigIntegerField()
    language = models.CharField(max_length=16, default="en")
    state = models.CharField(max_length=16, choices=State.choices, default=State.ACTIVE)
    step = models.PositiveIntegerField(default=0, help_text="index into plan: where the participant is")
    plan = models.JSONField(help_text="the ordered steps of this participant's journey")
    environment = models.JSONField(default=dict)
    flags = models.JSONField(default=list)
    excluded = models.BooleanField(default=False)
    preview = models.BooleanField(default=False, help_text="a researcher's preview: never counted or analysed")
    started_at = models.DateTimeField(auto_now_add=True)
    last_seen_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["study", "panel_pid"], condition=Q(panel_pid__isnull=False), name="one_session_per_panel_id"
            )
        ]
        indexes = [models.Index(fields=["study", "state"])]

    def __str__(self) -> str:
        return f"{self.study.slug}/{self.pk}"


class Trial(models.Model):
    """A planned trial of a session, created with the session; its spec fixes the stimulus exactly."""

    class Status(models.TextChoices):
        PENDING = "pending", _("Pending")
        ANSWERED = "answered", _("Answered")

    session = models.ForeignKey(Session, on_delete=models.CASCADE, related_name="trials")
    index = models.PositiveIntegerField()
    step = models.PositiveIntegerField(help_text="the plan step that shows this trial")
    block = models.CharField(max_length=64)
    kind = models.CharField(max_length=16)
    condition = models.CharField(max_length=200, blank=True)
    spec = models.JSONField()
    practice = models.BooleanField(default=False)
    attention = models.BooleanField(default=False)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.PENDING)
    plays = models.PositiveIntegerField(default=0)
    interruptions = models.JSONField(default=list)
    shown_at = models.DateTimeField(null=True, blank=True)
    answered_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["session", "index"]
        constraints = [models.UniqueConstraint(fields=["session", "index"], name="trial_index_once")]


class Answer(models.Model):
    """A stored answer. ``client_id`` is the client's idempotency key: a retry is acknowledged, not duplicated."""

    session = models.ForeignKey(Session, on_delete=models.CASCADE, related_name="answers")
    trial = models.OneToOneField(Trial, null=True, blank=True, on_delete=models.CASCADE, related_name="answer")
    step = models.PositiveIntegerField()
    key = models.CharField(max_length=100, help_text="what was answered: trial, questionnaire item, consent ...")
    client_id = models.CharField(max_length=64)
    value = models.JSONField()
    response_ms = models.FloatField(null=True, blank=True)
    comment = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["session", "created_at"]
        constraints = [
            models.UniqueConstraint(fields=["session", "client_id"], name="answer_once_per_client_id"),
            models.UniqueConstraint(fields=["session", "step", "key"], name="answer_once_per_step_key"),
        ]


class PageVisit(models.Model):
    """Time on each page: when a step was shown and when it was left."""

    session = models.ForeignKey(Session, on_delete=models.CASCADE, related_name="visits")
    step = models.PositiveIntegerField()
    kind = models.CharField(max_length=32)
    entered_at = models.DateTimeField()
    left_at = models.DateTimeField(null=True, blank=True)


class Decline(models.Model):
    """A participant who left before consenting: only that it happened and why (nothing about the person).

    ``declined``: answered "I do not agree"; ``withdrawn``: withdrew from the consent page; ``device``: their
    device did not meet the study's requirements, found before consent."""

    class Reason(models.TextChoices):
        DECLINED = "declined", _("Declined consent")
        WITHDRAWN = "withdrawn", _("Withdrew before consenting")
        DEVICE = "device", _("Device not suitable")

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="declines")
    at = models.DateTimeField(auto_now_add=True)
    reason = models.CharField(max_length=16, choices=Reason.choices, default=Reason.DECLINED)


class TrialPlayback(models.Model):
    """Which playbacks showed a trial (one per stream and showing; the last showing is the one answered)."""

    trial = models.ForeignKey(Trial, on_delete=models.CASCADE, related_name="playbacks")
    playback = models.OneToOneField("playback.Playback", on_delete=models.CASCADE, related_name="trial_link")
    position = models.PositiveSmallIntegerField(help_text="0: first (or only) stream shown, 1: second")
    showing = models.PositiveIntegerField(help_text="1 for the first showing, 2 after one interruption, ...")

    class Meta:
        ordering = ["trial", "showing", "position"]
