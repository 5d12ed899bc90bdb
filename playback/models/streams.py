"""Stored streams: imported traces, named stimuli, and background import jobs.

Thin around the pure core: a row keeps the stream's canonical JSON (``Stream.to_obj()``) and its metrics; the
``Stream`` value is rebuilt from it by the selectors.
"""

from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _


class Trace(models.Model):
    """One request of an imported trace file, de-duplicated by the hash of its content."""

    class Kind(models.TextChoices):
        STREAM = "stream", _("Replayable stream")
        SEED = "seed", _("Timing summary (seeds a synthetic model)")

    content_hash = models.CharField(max_length=64)
    kind = models.CharField(max_length=8, choices=Kind.choices)
    format = models.CharField(max_length=32)
    source_file = models.CharField(max_length=500)
    stream_key = models.CharField(max_length=300, blank=True)
    model_name = models.CharField(max_length=200, blank=True)
    tokenizer = models.CharField(max_length=64, blank=True)
    language = models.CharField(max_length=16, blank=True)
    data = models.JSONField()
    metrics = models.JSONField(default=dict)
    notes = models.JSONField(default=list)
    # The owner: only they see the trace unless it is shared. No owner (an operator's `import_traces` without
    # --owner, the demo) is the site's library, which every researcher sees.
    imported_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    shared = models.BooleanField(default=False, help_text="every researcher may see and use it")
    imported_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["id"]
        constraints = [
            # de-duplicated per owner (a private copy of someone else's trace is one's own), and once in the library
            models.UniqueConstraint(fields=["imported_by", "content_hash"], name="trace_once_per_owner"),
            models.UniqueConstraint(fields=["content_hash"], condition=models.Q(imported_by__isnull=True),
                                    name="trace_once_in_library"),
        ]

    def __str__(self) -> str:
        return f"{self.format}:{self.stream_key or self.pk}"


class Stimulus(models.Model):
    """A named, materialised stream that studies and the playground can use, with the spec that made it."""

    name = models.CharField(max_length=200)
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.CASCADE)
    spec = models.JSONField(default=dict)
    stream = models.JSONField()
    content_hash = models.CharField(max_length=64, db_index=True)
    metrics = models.JSONField(default=dict)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]
        constraints = [models.UniqueConstraint(fields=["owner", "name"], name="stimulus_unique_name_per_owner")]

    def __str__(self) -> str:
        return self.name
