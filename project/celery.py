"""The demo's Celery app, for ``DEMO_TASK_ENGINE=celery``: ``celery -A project.celery worker``.

Configured from Django's settings (the ``CELERY_`` ones); the endpoint's tasks are
registered by ``mcp_endpoint.celery``, which the app's ``ready()`` imports when ``TASKS``
names its backend.
"""

from __future__ import annotations

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "project.settings")

app = Celery("project")
app.config_from_object("django.conf:settings", namespace="CELERY")
