from django.apps import AppConfig


class PaceLabConfig(AppConfig):
    """Loads the Celery app once Django is set up, so every ``@shared_task`` sends through the configured broker.

    Celery's usual recipe imports the app in ``pacelab/__init__.py``; here that would load Celery and Django for
    every import of a pure module under ``pacelab`` (see ``pacelab/__init__.py``), so the app is loaded here instead.
    """

    name = "pacelab"
    verbose_name = "PaceLab"

    def ready(self) -> None:
        from pacelab import celery  # noqa: F401 - creating the app makes it Celery's current app
