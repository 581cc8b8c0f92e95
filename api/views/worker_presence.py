"""Whether a worker is alive to run an app's invocations, for ``GET /invocations/{id}``, its SSE and the log.

Without a worker an enqueued invocation just stays ``queued``: nothing fails, so nothing would say why. Workers
beat every second (``worker.fleet.workers_alive``); the API reads those beats through the client (``client.ops``, at
most once a second) and says plainly when none serves the app. In-process deployments without Redis (tests,
``services.queue`` None) have no workers to ask about.
"""

from __future__ import annotations

import logging
from typing import Any

log = logging.getLogger("agentq.api")


def no_worker_notice(app_name: str) -> str:
    """What an approver or operator reads when no alive worker serves ``app_name``."""
    return (f"no worker serving app {app_name!r} is alive: the invocation waits 'queued' until one starts "
            f"(agentq worker)")


async def workers_serving(queue: Any, app_name: str) -> int | None:
    """How many alive workers announced ``app_name`` (``queue``: the services' AgentqClient); None when that
    cannot be told (no Redis, or it failed to answer just now: a notice is advice, and must never turn an
    accepted enqueue into an error; or a worker is starting and has not said which apps it serves yet)."""
    if queue is None:
        return None
    try:
        serving = _serving(await queue.ops.alive_recently(), app_name)
        if serving == 0:
            # The shared read may be up to a second old, taken before a worker started: a notice says no worker
            # is there, so it is said only from a read made now (it costs a read only while none serves the app).
            serving = _serving(await queue.ops.alive_workers(), app_name)
    except Exception as exc:
        log.debug("workers alive not read: %r", exc)
        return None
    return serving


def _serving(workers: list[Any], app_name: str) -> int | None:
    """Workers in ``workers`` that serve ``app_name``; None when none does but one has not announced its apps yet
    (it beats from its start and announces once it consumes, a second later: it may well be serving the app)."""
    serving = sum(app_name in worker.apps for worker in workers)
    if serving == 0 and any(not worker.announced for worker in workers):
        return None
    return serving


async def waiting_notice(queue: Any, app_name: str, status: str) -> str | None:
    """The notice for a ``queued`` invocation of ``app_name`` when no worker serves it, else None."""
    if status != "queued" or await workers_serving(queue, app_name) != 0:
        return None
    return no_worker_notice(app_name)


async def log_if_unserved(queue: Any, app_name: str, invocation_id: str) -> None:
    """A warning in the API's log for an invocation enqueued while no worker serves its app."""
    if await workers_serving(queue, app_name) == 0:
        log.warning("invocation %s: %s", invocation_id, no_worker_notice(app_name))
