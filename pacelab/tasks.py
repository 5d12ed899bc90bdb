"""Enqueueing background work the same way in both modes; the one task helper every app shares.

Production sends the task to Celery on the configured queue; the embedded mode (``CELERY_TASK_ALWAYS_EAGER``)
runs it on a daemon thread so a request or the event loop never waits for it. The job row is the record: if the
broker is down when a job is created, the enqueue is logged and dropped, and the app that owns the job sends it
again from its own periodic task (analysis: ``analysis.tasks.requeue_stale_jobs``). Tasks are idempotent, so a job
sent twice runs once.

A service names its task (``"analysis.tasks.run_analysis"``) rather than importing it: tasks call services, so a
service importing its tasks module would close an import circle. The name is looked up in Celery's registry; a
process that has not imported the app's tasks module yet (a web process: Celery imports the ``tasks`` modules only
in workers) imports it here first, at run time, as Celery's own ``send_task`` by name would leave to the worker.
"""

from __future__ import annotations

import importlib
import logging
import threading
from typing import Any

from celery import current_app
from django.conf import settings

log = logging.getLogger("pacelab")


def enqueue(task: Any, *args: Any) -> bool:
    """Send ``task(*args)`` (a task, or its registered name); ``False`` (logged) when the broker cannot take it now."""
    if isinstance(task, str):
        task = registered(task)
    if settings.CELERY_TASK_ALWAYS_EAGER:
        threading.Thread(target=task.apply, args=(args,), daemon=True, name=f"task-{task.name}").start()
        return True
    try:
        task.apply_async(args=args, queue=settings.PACELAB_TASK_QUEUE, retry=False)
    except Exception as exc:  # noqa: BLE001 - kombu/redis errors vary; the job row stays queued and is retried
        log.warning("could not enqueue %s%r now (%s); its app's periodic requeue sends it again", task.name, args,
                    exc)
        return False
    return True


def registered(name: str) -> Any:
    """The task registered as ``name`` (``"analysis.tasks.run_analysis"``), its module imported if need be."""
    if name not in current_app.tasks:
        importlib.import_module(name.rpartition(".")[0])
    return current_app.tasks[name]
