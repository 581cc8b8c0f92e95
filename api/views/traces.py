"""The spans behind ADK's session trace route, read through the client (``client.traces``) from where the
workers' runners saved them.

ADK's route (``/dev/apps/{app}/debug/trace/session/{sid}``) names no user, while agentq keeps a session's
spans with the user's other keys. So the session is looked for among the users the caller may see: the ones
its key names, else (a key for every user, or no keys: the dev UI) the users with sessions in the app.
"""

from __future__ import annotations

from typing import Any

from api.access.auth import Caller
from api.deps import Services

MAX_USERS_LOOKED_AT = 1000
"""Past this many users in an app, a caller must say ``?userId=``: the lookup stays cheap."""


async def session_spans(
    services: Services, caller: Caller, app_name: str, session_id: str, user_id: str | None
) -> list[dict[str, Any]]:
    """The spans of ``session_id`` (of ``user_id``, else of whichever visible user has it); [] without Redis."""
    if services.queue is None:
        return []
    traces = services.queue.traces
    owners = [user_id] if user_id is not None else await _owners(traces, caller, app_name, session_id)
    spans: list[dict[str, Any]] = []
    for owner in owners:
        spans += await traces.spans(app_name, owner, session_id)
    return spans


async def _owners(traces: Any, caller: Caller, app_name: str, session_id: str) -> list[str]:
    named = caller.grant.users if caller.grant is not None else None
    if named is not None and "*" not in named:
        candidates = sorted(named)
    else:
        candidates = await traces.app_users(app_name, MAX_USERS_LOOKED_AT)
    candidates = [user for user in candidates if caller.allows(app_name, user)]
    return await traces.users_with_session(app_name, candidates, session_id)
