"""The Celery app. Tasks take ids and call services; see DEVELOPERS.md."""

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "pacelab.settings")

app = Celery("pacelab")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
app.autodiscover_tasks(["pacelab"])
