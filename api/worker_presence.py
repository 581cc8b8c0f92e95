"""Whether a worker is alive to run an app's invocations, for ``/health``, ``GET /invocations/{id}`` and the log.

Without a worker an enqueued invocation just stays ``queued``: nothing fails, so nothing would say why. Workers
beat every second (``worker.workers_alive``); the API reads those beats and says plainly when none serves the
app. In-process deployments without Redis (tests, ``services.redis`` None) have no workers to ask about.
"""

from __future__ import annotations

import logging
import time
from typing import Any

log = logging.getLogger("agentq.api")


def no_worker_notice(app_name: str) -> str:
    """What an approver or operator reads when no alive worker serves ``app_name``."""
    return (f"no worker serving app {app_name!r} is alive: the invocation waits 'queued' until one starts "
            f"(agentq worker)")


async def workers_serving(redis: Any, app_name: str) -> int | None:
    """How many alive workers announced ``app_name``; None when that cannot be told (no Redis, or it failed to
    answer just now: a notice is advice, and must never turn an accepted enqueue into an error)."""
    if redis is None:
        return None
    try:
        workers = await _alive_recently(redis)
    except Exception as exc:
        log.debug("workers alive not read: %r", exc)
        return None
    return sum(app_name in worker.apps for worker in workers)


async def waiting_notice(redis: Any, app_name: str, status: str) -> str | None:
    """The notice for a ``queued`` invocation of ``app_name`` when no worker serves it, else None."""
    if status != "queued" or await workers_serving(redis, app_name) != 0:
        return None
    return no_worker_notice(app_name)


async def log_if_unserved(redis: Any, app_name: str, invocation_id: str) -> None:
    """A warning in the API's log for an invocation enqueued while no worker serves its app."""
    if await workers_serving(redis, app_name) == 0:
        log.warning("invocation %s: %s", invocation_id, no_worker_notice(app_name))


FRESH_S = 1.0
"""How long one read of the workers' beats answers for: every enqueue and every stream opened on a queued
invocation asks, and workers beat once a second, so a read this old is as good as a new one."""

_last_read: tuple[Any, float, list] | None = None
"""(client, when, alive workers) of the latest read."""


async def _alive_recently(redis: Any) -> list:
    """The workers alive, read at most once per ``FRESH_S`` per client."""
    global _last_read
    from worker.workers_alive import alive_workers

    now = time.monotonic()
    if _last_read is not None and _last_read[0] is redis and now - _last_read[1] < FRESH_S:
        return _last_read[2]
    workers = await alive_workers(redis)
    _last_read = (redis, now, workers)
    return workers
