"""Deleting a session: every key of it goes, and its invocations that are not final are cancelled.

One script on the user's hash tag does it all or nothing (``lua/invocations/delete_session.lua``). Lua may only touch keys
it is given, so the invocations (the session's active set and queue) and artifact files are read first and
passed in; the script refuses ('changed') if either grew meanwhile, and the read is done again.

A cancelled invocation's record stays, cancelled with the reason, for its retention (``GET /invocations/{id}``
answers, a waiter wakes on its settled stream, a follower of its events gets the cancelled status); a worker
running one finds its lease gone and stops before its next commit or tool call. The bookkeeping outside the
user's tag (the idle expiry, the app's user set) is dropped after, and so are the credential requests its
invocations were parked on and, with the user's last session in the app, the user's stored credentials
(worker.records.credentials); the reaper's and watchdog's entries and call deadlines (on a Cluster their copies in the
user's shard) go in the script's cancel step.
"""

from __future__ import annotations

import logging
import time

from runtime.errors import RetryableError
from runtime.redis_store import keys
from runtime.redis_store.scripts import DELETE_SESSION
from worker.records import audit, child_sessions, credentials
from worker.records.codec import dumps
from worker.records.store import Where
from worker.webhooks import due as webhooks_due

log = logging.getLogger("agentq.worker")
_ATTEMPTS = 20


async def delete_session(store, app: str, user: str, session_id: str, reason: str,
                         actor: dict | None = None) -> list[str]:
    """Delete the session; the ids of the invocations it cancelled (deleting a missing session is no error).
    ``actor`` is recorded as who cancelled them (worker.records.audit), and its AgentTool child sessions go too."""
    shard = store.shard(Where(app=app, user=user, session=session_id))
    fixed = dict(
        meta=keys.session_meta(app, user, session_id), state=keys.session_state(app, user, session_id),
        events=keys.session_events(app, user, session_id), times=keys.session_event_times(app, user, session_id),
        stream=keys.session_stream(app, user, session_id),
        active=keys.session_active_invocations(app, user, session_id),
        queue=keys.session_queue(app, user, session_id), lease=keys.session_lease(app, user, session_id),
        fence=keys.session_fence(app, user, session_id), artifact_index=keys.artifact_index(app, user, session_id),
        user_sessions=keys.user_sessions(app, user), session_ids=keys.user_session_ids(app, user),
        parked=keys.user_parked(app, user),
        # where the notifications of the cancellations go
        webhook_due=keys.webhook_due(shard), webhook_outbox=keys.webhook_outbox(shard),
        **store.inbox_script_keys(Where(app=app, user=user, session=session_id), shard),
        **store.reaper_script_keys(shard),  # the cancel step drops their entries of what it cancels
    )
    error = dumps({"type": "InvocationCancelledError", "message": reason})
    cancel = audit.entry("cancel", actor, time.time(), reason=reason)
    for _ in range(_ATTEMPTS):
        active, queued, files = await store.batch(
            ("ZRANGE", fixed["active"], 0, -1), ("LRANGE", fixed["queue"], 0, -1), ("SMEMBERS", fixed["artifact_index"]))
        for reply in (active, queued, files):
            if isinstance(reply, Exception):
                raise reply
        ids = list(dict.fromkeys([*active, *queued]))
        files = sorted(files)
        per_invocation = [key for invocation_id in ids for key in (
            keys.invocation(app, user, invocation_id), keys.invocation_settled(app, user, invocation_id),
            keys.invocation_journal(app, user, invocation_id))]
        file_keys = [keys.artifact_versions(app, user, session_id, name) for name in files]
        reply = await DELETE_SESSION(
            store.mux, **fixed, invocation_keys=per_invocation, file_keys=file_keys, session_id=session_id,
            now=cancel.at if cancel else time.time(), invocation_count=len(ids), file_count=len(files),
            cancel_reason=reason, error_json=error, audit=audit.script_args(cancel, user, "")["audit"],
            invocation_ids=ids, filenames=files, parked_members=[dumps([user, i]) for i in ids])
        if reply[0] == "ok":
            break
    else:
        raise RetryableError(f"session {session_id!r} kept changing while it was being deleted")
    _, cancelled, calls, sessions_left = reply
    cleanup = [("ZREM", keys.session_expiries(shard), dumps([app, user, session_id])),
               ("DEL", keys.session_spans(app, user, session_id))]  # its trace spans (runtime.tracing)
    if cancelled and cancel is not None:  # the app's audit index is another slot on Redis Cluster
        cleanup.append(("ZADD", keys.app_audit(app), "NX", *[x for invocation_id in cancelled for x in (
            int(cancel.at * 1000), audit.script_args(cancel, user, invocation_id)["audit_member"])]))
    if not sessions_left:
        cleanup.append(("SREM", keys.app_users(app, shard), user))
    if cancelled:  # any of them may have queued a notification: on a Cluster, the shard is marked for delivery
        cleanup += webhooks_due.marks(shard, time.time() * 1000)
    await store.batch(*cleanup)
    user_gone = not sessions_left
    if user_gone and await store.mux.execute_command("SCARD", keys.user_sessions(app, user)):
        await store.mux.execute_command("SADD", keys.app_users(app, shard), user)  # one was created meanwhile
        user_gone = False
    # The held configs of its credential requests (client secrets) go with the session; the user's stored
    # credentials with the user's last session in the app (agentq has no user record beyond their sessions).
    await credentials.forget(store, app, user, list(calls), user_gone=user_gone)
    for invocation_id in cancelled:
        log.info("invocation %s: cancelled (%s)", invocation_id, reason)
    await child_sessions.delete_children(store, app, user, session_id)  # its AgentTools' sessions
    return list(cancelled)
