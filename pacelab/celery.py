"""The Celery app. Tasks take ids and call services; see DEVELOPERS.md.

Workers and beat name this module (``celery -A pacelab.celery worker``); Django processes load it in
``PaceLabConfig.ready`` (pacelab/apps.py), not from ``pacelab/__init__.py``, so importing a pure module under
``pacelab`` loads neither Celery nor Django.
"""

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "pacelab.settings")

app = Celery("pacelab")
app.config_from_object("django.conf:settings", namespace="CELERY")
# the tasks modules of every installed app, pacelab's own (pacelab/tasks.py) included
app.autodiscover_tasks()
