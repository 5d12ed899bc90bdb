"""Project configuration: settings, URL routing, ASGI application and the Celery app.

Importing this package loads nothing else: pure cores (``pacelab.jsonb``, ``pacelab.tokens``) live here too, and
importing one of them must not start Celery or Django. The Celery app (``pacelab.celery``) is loaded by Django's
``PaceLabConfig.ready`` in every Django process, so ``@shared_task`` binds to it, and workers name it directly:
``celery -A pacelab.celery worker``.
"""
