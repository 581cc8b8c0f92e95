"""A module-level Celery app for the ``celery`` command (Flower, inspect), configured from ``AGENTQ_REDIS_URL``.

    AGENTQ_REDIS_URL=redis://localhost:6379/0 celery -A worker.celery_main flower --port=5555
"""

from __future__ import annotations

import os

from .celery_app import make_celery

app = make_celery(os.environ.get("AGENTQ_REDIS_URL", "redis://localhost:6379/0"))
