"""The session doors: rewind a session, delete one."""

from __future__ import annotations

from typing import Any

from api.access.auth import Caller
from api.doors.guards import Guards, actor_of, check_scope, require_role


async def rewind(caller: Caller, guards: Guards, queue: Any, app_name: str, user_id: str, session_id: str,
                 before_invocation_id: str) -> Any:
    """Put a session back as it was before an invocation: scope (404), role ``enqueue`` (403: it rewrites the
    user's history as starting work does), then ``queue.rewind`` (409 while something is live on it)."""
    check_scope(guards, caller, app_name, user_id)
    require_role(caller, "enqueue", f"rewinding session {session_id!r}")
    return await queue.rewind(app_name, user_id, session_id, before_invocation_id)


async def delete_session(caller: Caller, guards: Guards, queue: Any, app_name: str, user_id: str, session_id: str, *,
                         session_service: Any = None) -> list[str]:
    """Delete a session and every key of it: scope (404), role ``enqueue`` (403), then ``queue.delete_session``,
    which cancels its live invocations recording the caller as who cancelled them; their ids. Without a queue
    (an API in-process, no Redis) the ``session_service`` deletes it (nothing can be live on it)."""
    check_scope(guards, caller, app_name, user_id)
    require_role(caller, "enqueue", f"deleting session {session_id!r}")
    if queue is None:
        await session_service.delete_session(app_name=app_name, user_id=user_id, session_id=session_id)
        return []
    return await queue.delete_session(app_name, user_id, session_id, actor=actor_of(caller))
