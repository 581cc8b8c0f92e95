"""The cancel doors: one invocation, or everything live on a session."""

from __future__ import annotations

from typing import Any

from api.access.auth import Caller
from api.doors.guards import Guards, actor_of, check_scope, require_role, visible_record


async def cancel(caller: Caller, guards: Guards, queue: Any, invocation_id: str, reason: str) -> Any:
    """Cancel a queued, running or parked invocation: scope (404), role ``operate`` (403), then ``queue.cancel``
    recording the caller as who cancelled (409 when it had settled). The record after."""
    await visible_record(queue, guards, caller, invocation_id)
    require_role(caller, "operate", f"cancelling invocation {invocation_id!r}")
    return await queue.cancel(invocation_id, reason, actor=actor_of(caller))


async def cancel_session(caller: Caller, guards: Guards, queue: Any, app_name: str, user_id: str, session_id: str,
                         reason: str) -> list[str]:
    """Cancel every invocation queued, running or parked on a session: scope (404), role ``operate`` (403), then
    the store's session cancel (the one line to change when the store cancels a session in one step); the ids
    cancelled."""
    check_scope(guards, caller, app_name, user_id)
    require_role(caller, "operate", f"cancelling session {session_id!r}")
    return await queue.cancel_session(app_name, user_id, session_id, reason, actor=actor_of(caller))
