"""Enqueueing background work the same way in both modes.

Production sends the task to Celery on the configured queue; the embedded mode (``CELERY_TASK_ALWAYS_EAGER``)
runs it on a daemon thread so a request or the event loop never waits for it.
"""

from __future__ import annotations

import threading
from typing import Any

from django.conf import settings


def enqueue(task: Any, *args: Any) -> None:
    if settings.CELERY_TASK_ALWAYS_EAGER:
        threading.Thread(target=task.apply, args=(args,), daemon=True, name=f"task-{task.name}").start()
    else:
        task.apply_async(args=args, queue=settings.PACELAB_TASK_QUEUE)
