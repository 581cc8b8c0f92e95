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
    """Builds run-job commands for Redis pipelines (or sends them through a Celery app). Duplicates are
    harmless: the record and the session lease decide who runs."""

    def __init__(self, celery_app: Any | None = None, db: int = 0):
        self.app = celery_app
        self.db = db

    def commands(self, invocation_id: str, where: list[str] | None = None) -> list[tuple]:
        """The commands that send the run job (none with a Celery app: call ``sent`` after they ran).

        ``where`` (``[app, user, session]``) rides along so the worker need not look the invocation up.
        """
        if self.app is not None:
            return []
        from .message import run_job_commands

        return run_job_commands(invocation_id, self.db, where)

    def script_args(self, invocation_id: str, where: list[str] | None = None) -> list[str]:
        """``[queue, run_job, event_channel, sent_event]`` for a Lua script that queues the job itself (the job
        fields empty with a Celery app: then call ``sent`` after the script ran)."""
        if self.app is not None:
            return [QUEUE, "", "", ""]
        from .message import run_job_commands

        (_, queue, job), (_, channel, event) = run_job_commands(invocation_id, self.db, where)
        return [queue, job, channel, event]

    def sent(self, invocation_id: str, where: list[str] | None = None) -> None:
        """Called once the commands ran: with a Celery app, this is where the job is sent."""
        if self.app is not None:
            args: list = [invocation_id, where] if where else [invocation_id]
            self.app.send_task(RUN_TASK, args=args, queue=QUEUE)
