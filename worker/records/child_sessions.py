"""AgentTool child sessions: linked to the session and invocation whose call made them, deleted with either.

An AgentTool runs its agent in a session of its own (``runtime.tools.agent_tool_session``), deleted once the
agent answers. A child that paused (its agent waits for a person) outlives that, so the worker's session service
records each child in its parent session's ``keys.session_children`` hash (child session id -> the parent's
invocation id). Cancelling the invocation deletes its children; deleting the session (``DELETE session``, an idle
session's expiry) deletes them all. A child's own children go with it: deleting a child is deleting a session.
"""

from __future__ import annotations

import logging
from typing import Any

from runtime.redis_store import keys

log = logging.getLogger("agentq.worker")


async def link(mux: Any, app: str, user: str, session_id: str, invocation_id: str, child_session_id: str) -> None:
    """Record that ``invocation_id`` of the session made the child session ``child_session_id``."""
    await mux.execute_command("HSET", keys.session_children(app, user, session_id), child_session_id, invocation_id)


async def unlink(mux: Any, app: str, user: str, session_id: str, child_session_id: str) -> None:
    """Forget a child the AgentTool deleted itself (its agent answered)."""
    await mux.execute_command("HDEL", keys.session_children(app, user, session_id), child_session_id)


async def delete_children(store: Any, app: str, user: str, session_id: str, invocation_id: str | None = None) -> list[str]:
    """Delete the child sessions of ``invocation_id`` (None: of every invocation of the session, and the link
    hash with them); their ids."""
    index = keys.session_children(app, user, session_id)
    links = await store.redis.hgetall(index)
    doomed = [child for child, parent in links.items() if invocation_id is None or parent == invocation_id]
    for child in doomed:
        await store.delete_session(app, user, child, f"its parent session {session_id!r} was deleted"
                                   if invocation_id is None else f"its parent invocation {invocation_id!r} ended")
    if invocation_id is None:
        await store.redis.delete(index)
    elif doomed:
        await store.redis.hdel(index, *doomed)
    if doomed:
        log.info("session %s: deleted %d AgentTool child session(s)", session_id, len(doomed))
    return doomed
