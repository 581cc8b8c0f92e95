"""The enqueue door: start an invocation on a session, with its double-texting strategy."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from api.access.auth import Caller
from api.doors.guards import Guards, actor_of, check_scope, enqueued_by, require_role


async def enqueue(caller: Caller, guards: Guards, queue: Any, *, app_name: str, user_id: str, session_id: str,
                  new_message: Any, state_delta: dict | None = None, run_config: dict | None = None,
                  park_timeout: float | None = None, webhook: str | None = None, strategy: str = "enqueue",
                  invocation_id: str | None = None,
                  prepare: Callable[[], Awaitable[None]] | None = None) -> str:
    """Start an invocation; its id. Scope (404), role ``enqueue`` (403), the webhook's SSRF rule (400), the rate
    limits (429), then ``queue.enqueue`` recording the caller as who enqueued it (and, for a ``strategy`` that
    cancels what runs, as who cancelled it). ``prepare`` runs once every guard has passed, just before the store
    call: what an entry point must write first (A2A: the task's session and its ``submitted`` task)."""
    check_scope(guards, caller, app_name, user_id)
    require_role(caller, "enqueue", f"starting an invocation in app {app_name!r}")
    if webhook is not None:
        await guards.webhook_guard.check(webhook)
    by = {} if strategy == "enqueue" else {"strategy": strategy, "actor": actor_of(caller)}
    given = {name: value for name, value in (("park_timeout", park_timeout), ("webhook", webhook),
                                             ("invocation_id", invocation_id)) if value is not None}

    async def start() -> str:
        if prepare is not None:
            await prepare()
        return await queue.enqueue(app_name, user_id, session_id, new_message, state_delta, run_config,
                                   principal=enqueued_by(caller), **given, **by)

    return await guards.rate_limits.admitted(queue, caller.principal_id, app_name, user_id, start,
                                             invocation_id=str)
