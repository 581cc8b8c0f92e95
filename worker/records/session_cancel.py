"""Cancelling a session: every invocation queued, running or parked on it, in one step
(``lua/invocations/cancel_session.lua``, each by ``lua/lib/cancel_step.lua``).

One step, not one cancel per invocation: cancelling the running one hands the session to the next queued one,
and a worker that claimed it before its own cancel arrived would commit its user message. In one script no
worker can claim anything of the session in between. Lua may only touch keys it is given, so the live ids are
read first and passed in; the script refuses ('moved') when the session's live set changed meanwhile, and the
read is done again.
"""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING

from runtime.errors import RetryableError
from runtime.redis_store import keys
from runtime.redis_store.scripts import CANCEL_SESSION
from worker.records import audit, child_sessions
from worker.records.codec import encode_fields
from worker.records.store import Where, status_data
from worker.webhooks import due as webhooks_due

if TYPE_CHECKING:
    from worker.records.store import InvocationStore

log = logging.getLogger("agentq.worker")
ATTEMPTS = 50
"""Reads of the live set before giving up on a session whose invocations never hold still."""


async def cancel_session(store: InvocationStore, app: str, user: str, session_id: str, reason: str, *,
                         actor: dict | None = None) -> list[str]:
    """Cancel every invocation live on the session at once; the ids it cancelled (empty when none was live).
    ``actor`` (``{principal, client}``, worker.records.audit) is recorded as who cancelled each. RetryableError when the
    session's live set kept changing for ``ATTEMPTS`` reads."""
    where = Where(app=app, user=user, session=session_id)
    shard = store.shard(where)
    now = time.time()
    entry = audit.entry("cancel", actor, now, reason=reason)
    detail = {"reason": reason, **({"cancelledBy": audit.who(entry)} if entry is not None else {})}
    error = {"type": "InvocationCancelledError", "message": reason}
    session_keys = store.session_script_keys(where, "queue", "lease", "fence", "stream", "active", "session_meta")
    for _ in range(ATTEMPTS):
        active, queued = await store.batch(("ZRANGE", session_keys["active"], 0, -1),
                                           ("LRANGE", session_keys["queue"], 0, -1))
        for reply in (active, queued):
            if isinstance(reply, Exception):
                raise reply
        live = list(dict.fromkeys([*active, *queued]))
        if not live:
            return []
        reply = await CANCEL_SESSION(
            store.mux, **session_keys, parked=keys.user_parked(app, user), webhook_due=keys.webhook_due(shard),
            webhook_outbox=keys.webhook_outbox(shard), **store.inbox_script_keys(where, shard),
            **store.reaper_script_keys(shard),
            invocation_keys=[key for invocation_id in live for key in (
                store.record_key(invocation_id, where), keys.invocation_settled(app, user, invocation_id),
                keys.invocation_journal(app, user, invocation_id))],
            app_audit=store._app_audit_key(where, entry), now=now,
            status_data=status_data("cancelled", detail), **store.stream_trim,
            audit=audit.script_args(entry, user, "")["audit"],
            live_ids=[len(live), *[value for invocation_id in live for value in (
                invocation_id, audit.script_args(None, user, invocation_id)["audit_member"])]],
            fields=encode_fields({"cancel_reason": reason, "error": error, "finished_at": now}))
        if reply[0] == "ok":
            break
    else:
        raise RetryableError(f"session {session_id!r} of user {user!r} in app {app!r} kept changing while its "
                             "invocations were being cancelled")
    _, cancelled, _calls = reply
    if cancelled:  # any of them may have queued a notification: on a Cluster, the shard is marked for delivery
        for command in webhooks_due.marks(shard, now * 1000):
            await store.mux.execute_command(*command)
    for invocation_id in cancelled:
        store.remember(invocation_id, where)
        await store._index_audit(where, entry, invocation_id)  # Redis Cluster only: another slot
        await child_sessions.delete_children(store, app, user, session_id, invocation_id)
        log.info("invocation %s: cancelled with its session (%s)", invocation_id, reason)
    return list(cancelled)
