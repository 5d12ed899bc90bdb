"""Analysis runs: one row per analysis of a study's data, a small state machine so a redelivered task runs once.

A run is keyed by the study's *data version* (a hash of what the analysis reads), so asking again for data that
did not change returns the stored run. ``lease`` names the attempt that currently owns a running run: a task
redelivered after a worker died takes the lease over, and only the lease holder may store results, so a run's
results and files are stored exactly once. Files live under ``settings.VAR_DIR/analysis/<run id>/``.
"""

from datetime import timedelta

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

# The reporter beats at every progress write and cancel check (every half second while the pipeline runs), and a
# heartbeat thread every ANALYSIS_HEARTBEAT_S seconds whatever the pipeline does (analysis/heartbeat.py). A run
# silent for ANALYSIS_LOST_AFTER_S has lost its worker: the dashboard says "worker lost, restarting" and the sweep
# (celery beat, every 15 s) sends it again; the next attempt takes the lease over. Silent for ABANDONED_AFTER, a
# new request or a cancel gives it up.
ABANDONED_AFTER = timedelta(minutes=10)
LOST_STAGE = "lost"


def lost_after() -> timedelta:
    return timedelta(seconds=settings.ANALYSIS_LOST_AFTER_S)


class AnalysisRun(models.Model):
    class State(models.TextChoices):
        QUEUED = "queued", _("Queued")
        RUNNING = "running", _("Running")
        DONE = "done", _("Done")
        FAILED = "failed", _("Failed")
        CANCELLED = "cancelled", _("Cancelled")

    FINISHED = (State.DONE, State.FAILED, State.CANCELLED)

    study = models.ForeignKey("studyapp.Study", on_delete=models.CASCADE, related_name="analysis_runs")
    data_version = models.CharField(max_length=64, db_index=True)
    state = models.CharField(max_length=10, choices=State.choices, default=State.QUEUED)
    stage = models.CharField(max_length=32, blank=True)
    percent = models.FloatField(default=0.0)
    cancel_requested = models.BooleanField(default=False)
    lease = models.CharField(max_length=32, blank=True, help_text="the attempt that owns a running run")
    attempts = models.PositiveIntegerField(default=0)
    results = models.JSONField(null=True, blank=True)
    error = models.TextField(blank=True)
    requested_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    language = models.CharField(max_length=16, blank=True,
                                help_text="the requester's language: the HTML report's (blank: LANGUAGE_CODE)")
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    heartbeat_at = models.DateTimeField(
        null=True, blank=True, help_text="last sign of life of the attempt holding the lease (a running run only)")

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            models.UniqueConstraint(
                fields=["study", "data_version"], condition=Q(state__in=["queued", "running"]),
                name="analysis_one_active_run_per_data_version",
            )
        ]

    def __str__(self) -> str:
        return f"analysis run {self.pk} of {self.study_id} ({self.state})"

    @property
    def finished(self) -> bool:
        return self.state in self.FINISHED

    def last_sign_of_life(self):
        return self.heartbeat_at or self.started_at or self.created_at

    def worker_lost(self, now=None) -> bool:
        """Running, but its attempt has been silent for ``ANALYSIS_LOST_AFTER_S`` (or the sweep already found so and
        sent it again): its worker died, and another attempt is on the way."""
        if self.state != self.State.RUNNING:
            return False
        if self.stage == LOST_STAGE:
            return True
        last = self.last_sign_of_life()
        return last is not None and (now or timezone.now()) - last > lost_after()

    def abandoned(self, now=None) -> bool:
        """Running, but its attempt has shown no sign of life for ``ABANDONED_AFTER``: its process died without a
        redelivery (an inline run killed, the embedded server restarted, a failure while the database was down)."""
        if self.state != self.State.RUNNING:
            return False
        last = self.last_sign_of_life()
        return last is not None and (now or timezone.now()) - last > ABANDONED_AFTER


class AnalysisFile(models.Model):
    """A file a finished run produced (figure, report, table), relative to the run's directory."""

    run = models.ForeignKey(AnalysisRun, on_delete=models.CASCADE, related_name="files")
    name = models.CharField(max_length=200)
    kind = models.CharField(max_length=16, help_text="report, figure, table or methods")
    size = models.PositiveBigIntegerField(default=0)

    class Meta:
        ordering = ["run", "name"]
        constraints = [models.UniqueConstraint(fields=["run", "name"], name="analysis_file_once_per_run")]

    def __str__(self) -> str:
        return f"{self.run_id}/{self.name}"


class PlanRun(models.Model):
    """A planner run for a study (``analysis.stats.planning``): how well each participant count would pin down the
    headline, computed in the background before the study opens, with its progress (simulated studies done)."""

    class State(models.TextChoices):
        QUEUED = "queued", _("Queued")
        RUNNING = "running", _("Running")
        DONE = "done", _("Done")
        FAILED = "failed", _("Failed")

    study = models.ForeignKey("studyapp.Study", on_delete=models.CASCADE, related_name="plan_runs")
    participants = models.JSONField(default=list, help_text="participant counts simulated")
    runs = models.PositiveIntegerField(default=200, help_text="simulated studies per participant count")
    model = models.JSONField(default=dict, blank=True, help_text="the population model's parameters")
    state = models.CharField(max_length=10, choices=State.choices, default=State.QUEUED)
    done = models.PositiveIntegerField(default=0)
    total = models.PositiveIntegerField(default=0)
    results = models.JSONField(null=True, blank=True)
    error = models.TextField(blank=True)
    requested_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"plan run {self.pk} of {self.study_id} ({self.state})"

    @property
    def percent(self) -> float:
        return round(100.0 * self.done / self.total, 1) if self.total else 0.0
