from django.apps import AppConfig


class DashboardConfig(AppConfig):
    """The researcher dashboard: studies, sharing, state changes and the live progress view."""

    name = "dashboard"
    default_auto_field = "django.db.models.BigAutoField"
