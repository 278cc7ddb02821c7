from __future__ import annotations

import os
from typing import Any

from celery import Celery
from celery.signals import task_postrun, task_prerun

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

app = Celery("agentdocs")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


@task_prerun.connect
@task_postrun.connect
def _close_old_connections(**kwargs: Any) -> None:
    """What Django does around a request, around each task: close a connection that
    is past CONN_MAX_AGE or broken, keep the others (settings.CELERY_DB_REUSE_MAX)."""
    task = kwargs.get("task")
    if task is None or getattr(task.request, "is_eager", False):
        return  # in-process, the connection is the caller's (a request's, a test's)
    from django.db import close_old_connections

    close_old_connections()
