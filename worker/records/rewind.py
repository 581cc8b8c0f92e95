"""Rewinding a session through the queue: ``Runner.rewind_async``'s result, refused while anything is live on it.

The rewind itself is the runtime's (``runtime.sessions.rewind``): one event appended through the session service
(history, state) and the artifact versions that put the session's artifacts back. What this module adds is the
guard. ``rewind_begin.lua`` takes the session lease as ``rewind:<id>|<fence>`` only when nothing is queued,
running or parked on the session, so no worker claims an invocation enqueued meanwhile, and the rewind event is
committed under that fence, so it is refused if the lease was lost. ``rewind_end.lua`` gives the lease back and
the session's queue head (enqueued during the rewind) is dispatched. A rollback (``worker.records.double_texting``) takes
the lease in its enqueue step instead and finishes through ``put_back`` and ``release`` here.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING

from runtime.errors import ConflictError, SessionNotFoundError
from runtime.ids import new_invocation_id
from runtime.redis_store import keys
from runtime.redis_store.scripts import REWIND_BEGIN, REWIND_END
from runtime.sessions.redis_session_service import current_fence
from runtime.sessions.rewind import rewind_session
from worker.records.store import Where

if TYPE_CHECKING:
    from runtime.events import Event
    from runtime.sessions import Session
    from worker.records.store import InvocationStore

log = logging.getLogger(__name__)

HOLD_S = 30.0
"""How long a rewind may hold the session lease; past it (its process died) invocations run again."""


class SessionBusyError(ConflictError):
    """Raised when a session has an invocation queued, running or parked (or a rewind under way) and the request
    needs it idle: a rewind, or an enqueue with ``multitaskStrategy`` ``reject``."""


async def rewind(store: InvocationStore, app: str, user: str, session_id: str, before_invocation_id: str) -> Session:
    """Put the session back as it was before ``before_invocation_id`` (``Runner.rewind_async``); the session after.

    Raises SessionNotFoundError, InvocationNotFoundError (no event of that invocation in the session),
    SessionBusyError (something queued, running or parked, or another rewind)."""
    where = Where(app=app, user=user, session=session_id)
    reply = await REWIND_BEGIN(store.mux, session_meta=keys.session_meta(app, user, session_id),
                               **store.session_script_keys(where, "active", "lease", "fence"),
                               holder="rewind:" + new_invocation_id(), hold_ms=int(HOLD_S * 1000))
    if reply[0] == "missing":
        raise SessionNotFoundError(f"session {session_id!r} of user {user!r} in app {app!r} does not exist")
    if reply[0] == "busy":
        raise SessionBusyError(f"session {session_id!r} cannot be rewound while invocations are queued, running or "
                               f"parked on it ({', '.join(reply[1])}): cancel them first")
    if reply[0] == "held":
        raise SessionBusyError(f"session {session_id!r} is being rewound already; try again when that is done")
    token = reply[1]
    try:
        return await put_back(store, where, token, lambda events: before_invocation_id)
    finally:
        await release(store, where, token)


async def put_back(store: InvocationStore, where: Where, token: str,
                   choose: Callable[[list[Event]], str | None]) -> Session:
    """Commit the rewind to before the invocation ``choose(history)`` names (None: nothing to rewind) under the
    fence of the lease ``token`` (held by the caller); the session after it. Raises SessionNotFoundError,
    InvocationNotFoundError, FencedOutError."""
    fenced = current_fence.set(int(token.rsplit("|", 1)[1]))
    try:
        session = await store.session_service.get_session(app_name=where.app, user_id=where.user,
                                                          session_id=where.session)
        if session is None:
            raise SessionNotFoundError(f"session {where.session!r} of user {where.user!r} in app {where.app!r} "
                                       "does not exist")
        before_invocation_id = choose(session.events)
        if before_invocation_id is not None:
            await rewind_session(session_service=store.session_service, session=session,
                                 rewind_before_invocation_id=before_invocation_id,
                                 artifact_service=store.artifact_service, app_name=where.app)
            log.info("session %s: rewound to before invocation %s", where.session, before_invocation_id)
    finally:
        current_fence.reset(fenced)
    return session


async def release(store: InvocationStore, where: Where, token: str) -> None:
    """Give the rewind's lease back and send the run job of the session's queue head, if any."""
    head = await REWIND_END(store.mux, **store.session_script_keys(where, "lease", "queue"), token=token)
    if head:
        await store.dispatch_next(head)
