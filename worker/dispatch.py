"""Sending run jobs: a Celery message carrying only the invocation id, on the ``agentq`` queue."""

from __future__ import annotations

from typing import Any

RUN_TASK = "agentq.run"
QUEUE = "agentq"
DISPATCH_GRACE_S = 5.0
"""A run job not claimed this long after it was sent is sent again by a reaper (the broker lost it)."""


class Dispatcher:
    """Sends run jobs through a Celery app (built for the broker URL on first use when none is given)."""

    def __init__(self, redis_url: str, celery_app: Any | None = None):
        self._redis_url = redis_url
        self._app = celery_app

    @property
    def app(self):
        """The Celery app used to publish."""
        if self._app is None:
            from .celery_app import make_celery

            self._app = make_celery(self._redis_url)
        return self._app

    def send(self, invocation_id: str) -> None:
        """Publish one run job. Duplicates are harmless: the record and the session lease decide who runs."""
        self.app.send_task(RUN_TASK, args=[invocation_id], queue=QUEUE)
