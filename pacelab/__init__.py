"""Project configuration: settings, URL routing, ASGI application and the Celery app."""

from pacelab.celery import app as celery_app

__all__ = ["celery_app"]
