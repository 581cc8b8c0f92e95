"""Sending run jobs: a Celery message carrying only the invocation id, on the ``agentq`` queue.

By default the message is written straight into the caller's Redis pipeline (see ``worker.message``); with a
``celery_app`` given, ``send_task`` is used instead (custom routing, or a stand-in broker in tests).
"""

from __future__ import annotations

from typing import Any

RUN_TASK = "agentq.run"
QUEUE = "agentq"
DISPATCH_GRACE_S = 5.0
"""A run job not claimed this long after it was sent is sent again by a reaper (the broker lost it)."""


class Dispatcher:
    """Adds run jobs to Redis pipelines (or sends them through a Celery app). Duplicates are harmless: the
    record and the session lease decide who runs."""

    def __init__(self, celery_app: Any | None = None):
        self.app = celery_app

    def add(self, pipe, invocation_id: str) -> None:
        """Put the run job on ``pipe`` (sent when the pipeline executes); with a Celery app, send it now."""
        if self.app is not None:
            self.app.send_task(RUN_TASK, args=[invocation_id], queue=QUEUE)
            return
        from .message import add_run_job

        add_run_job(pipe, invocation_id, db=pipe.connection_pool.connection_kwargs.get("db", 0) or 0)

    async def send(self, redis, invocation_id: str) -> None:
        """Send one run job now."""
        pipe = redis.pipeline(transaction=False)
        self.add(pipe, invocation_id)
        if len(pipe):
            await pipe.execute()
