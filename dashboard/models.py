"""The dashboard's own records: a researcher's payment decision for a participant (approve or reject, and why),
and the cached quality report of a session.

The quality report only suggests; ``PaymentDecision`` is what the researcher decided, exported for the panel's bulk
approval. One decision per session; deciding again replaces it (who and when are kept with it). A rejection always
has a reason (the service refuses one without).

``QualitySummary`` keeps each session's quality report so the review page stays fast at a thousand sessions: it is
valid while its ``key`` (study file, state, end, flags) matches, and ``final`` once it was computed well after the
session ended (late paint logs have arrived by then); anything else is recomputed on the next read.
"""

from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _


class PaymentDecision(models.Model):
    class Decision(models.TextChoices):
        APPROVE = "approve", _("Approve")
        REJECT = "reject", _("Reject")

    session = models.OneToOneField("studyapp.Session", on_delete=models.CASCADE, related_name="payment_decision")
    decision = models.CharField(max_length=8, choices=Decision.choices)
    reason = models.TextField(blank=True)
    reason_id = models.CharField(max_length=64, blank=True, help_text="the study's rejection reason, if chosen")
    decided_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    decided_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"{self.decision} session {self.session_id}"


class QualitySummary(models.Model):
    session = models.OneToOneField("studyapp.Session", on_delete=models.CASCADE, related_name="quality_summary")
    key = models.CharField(max_length=200)
    final = models.BooleanField(default=False)
    data = models.JSONField(help_text="dashboard.core.quality.Quality.as_dict()")
    computed_at = models.DateTimeField()

    def __str__(self) -> str:
        return f"quality of session {self.session_id}"
