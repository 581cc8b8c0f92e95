"""The spans behind ADK's session trace route, read from where the workers' runners saved them.

ADK's route (``/dev/apps/{app}/debug/trace/session/{sid}``) names no user, while agentq keeps a session's
spans with the user's other keys. So the session is looked for among the users the caller may see: the ones
its key names, else (a key for every user, or no keys: the dev UI) the users with sessions in the app.
"""

from __future__ import annotations

from typing import Any

from runtime.redis_store import keys
from runtime.redis_store.codec import text

from .auth import Caller
from .deps import Services

MAX_USERS_LOOKED_AT = 1000
"""Past this many users in an app, a caller must say ``?userId=``: the lookup stays cheap."""


async def session_spans(
    services: Services, caller: Caller, app_name: str, session_id: str, user_id: str | None
) -> list[dict[str, Any]]:
    """The spans of ``session_id`` (of ``user_id``, else of whichever visible user has it); [] without Redis."""
    if services.redis is None:
        return []
    from runtime.tracing import RedisSpanStore

    store = RedisSpanStore(client=services.redis)
    owners = [user_id] if user_id is not None else await _owners(services.redis, caller, app_name, session_id)
    spans: list[dict[str, Any]] = []
    for owner in owners:
        spans += await store.list(app_name=app_name, user_id=owner, session_id=session_id)
    return spans


async def _owners(client: Any, caller: Caller, app_name: str, session_id: str) -> list[str]:
    named = caller.grant.users if caller.grant is not None else None
    if named is not None and "*" not in named:
        candidates = sorted(named)
    else:
        candidates = sorted(text(user) for user in await client.srandmember(keys.app_users(app_name),
                                                                             MAX_USERS_LOOKED_AT))
    candidates = [user for user in candidates if caller.allows(app_name, user)]
    if not candidates:
        return []
    async with client.pipeline(transaction=False) as pipe:
        for user in candidates:
            pipe.sismember(keys.user_sessions(app_name, user), session_id)
        found = await pipe.execute()
    return [user for user, has in zip(candidates, found, strict=True) if has]
