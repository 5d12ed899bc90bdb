"""The dashboard's own records: a researcher's payment decision for a participant (approve or reject, and why).

The quality report only suggests; this row is what the researcher decided, exported for the panel's bulk
approval. One decision per session; deciding again replaces it (who and when are kept with it).
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
    decided_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    decided_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"{self.decision} session {self.session_id}"
