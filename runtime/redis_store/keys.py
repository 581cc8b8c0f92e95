"""Every Redis key agentq uses, in one place.

All keys start with ``agentq:``. The keys of one user's sessions share the hash tag ``{app/user}`` so that
one Lua script can commit an event (history, session state, user state, version, fence check, stream entry)
on Redis Cluster too. App-scoped state is shared across users, so it lives under the app's own tag and an
event that carries an ``app:`` delta pays one extra round trip.
"""

from __future__ import annotations

import functools
from urllib.parse import quote

PREFIX = "agentq:"


@functools.lru_cache(maxsize=8192)
def _part(value: str) -> str:
    # Escape characters that would break the hash tag or the key structure (cached: every commit builds keys).
    # Sized for the ids of the invocations one worker has in flight: every new session and invocation id
    # adds an entry, so a bigger cache kept growing a long-lived worker for hundreds of thousands of them.
    return quote(value, safe="")


def user_tag(app_name: str, user_id: str) -> str:
    """The hash tag shared by a user's sessions and user state."""
    return "{" + _part(app_name) + "/" + _part(user_id) + "}"


def app_tag(app_name: str) -> str:
    """The hash tag of app-wide keys."""
    return "{" + _part(app_name) + "}"


def _session_base(app_name: str, user_id: str, session_id: str) -> str:
    return f"{PREFIX}{user_tag(app_name, user_id)}:s:{_part(session_id)}"


def session_meta(app_name: str, user_id: str, session_id: str) -> str:
    """Hash: id, app, user, version, last_update_time."""
    return _session_base(app_name, user_id, session_id) + ":meta"


def session_state(app_name: str, user_id: str, session_id: str) -> str:
    """Hash: session-scoped state, one field per key, JSON values."""
    return _session_base(app_name, user_id, session_id) + ":state"


def session_events(app_name: str, user_id: str, session_id: str) -> str:
    """List: committed events as JSON, oldest first."""
    return _session_base(app_name, user_id, session_id) + ":events"


def session_stream(app_name: str, user_id: str, session_id: str) -> str:
    """Stream: every event (partial ones too) and status entry of the session."""
    return _session_base(app_name, user_id, session_id) + ":stream"


def session_lease(app_name: str, user_id: str, session_id: str) -> str:
    """String: the invocation id holding the session's lease (with a TTL the holder heartbeats)."""
    return _session_base(app_name, user_id, session_id) + ":lease"


def session_fence(app_name: str, user_id: str, session_id: str) -> str:
    """Integer: the fencing token, INCRed on every lease acquisition; commits carry the token they hold."""
    return _session_base(app_name, user_id, session_id) + ":fence"


def user_sessions(app_name: str, user_id: str) -> str:
    """Set: the session ids of one user in one app."""
    return f"{PREFIX}{user_tag(app_name, user_id)}:sessions"


def user_state(app_name: str, user_id: str) -> str:
    """Hash: ``user:`` state of one user in one app."""
    return f"{PREFIX}{user_tag(app_name, user_id)}:user_state"


def app_state(app_name: str) -> str:
    """Hash: ``app:`` state of one app."""
    return f"{PREFIX}{app_tag(app_name)}:app_state"


def app_users(app_name: str) -> str:
    """Set: user ids that have sessions in the app (for list_sessions without a user)."""
    return f"{PREFIX}{app_tag(app_name)}:users"


def artifact_versions(app_name: str, user_id: str, scope: str, filename: str) -> str:
    """List: the versions of one artifact (scope is a session id, or 'user' for ``user:`` files)."""
    return f"{PREFIX}{user_tag(app_name, user_id)}:a:{_part(scope)}:{_part(filename)}"


def artifact_index(app_name: str, user_id: str, scope: str) -> str:
    """Set: artifact filenames in one scope (outside ``:a:``, so no filename, not even "index", can reach it)."""
    return f"{PREFIX}{user_tag(app_name, user_id)}:a-index:{_part(scope)}"


def session_spans(app_name: str, user_id: str, session_id: str) -> str:
    """List: one JSON array of trace spans per finished run of the session's invocations (runtime.tracing)."""
    return _session_base(app_name, user_id, session_id) + ":spans"


def session_event_times(app_name: str, user_id: str, session_id: str) -> str:
    """Sorted set: event index (zero-padded) scored by the running maximum of event timestamps.

    Lets ``get_session(after_timestamp=...)`` find the first event to load without reading history.
    """
    return _session_base(app_name, user_id, session_id) + ":times"


def session_active_invocations(app_name: str, user_id: str, session_id: str) -> str:
    """Sorted set: invocation id scored by the millisecond part of its first stream entry id.

    Stream trimming never drops entries at or after the lowest score (the oldest active invocation).
    """
    return _session_base(app_name, user_id, session_id) + ":active"


# --- worker: invocations, session queues, leases, journal (appended by the worker engineer) -------


def sharded(name: str, shard: str) -> str:
    """A cross-session set the status scripts update together with a session's keys.

    On one node (``shard`` ''): the one global key, ``agentq:<name>``. On Redis Cluster every user's
    invocations have their own copy in the user's hash slot, ``agentq:{<shard>}:<name>``, where ``shard`` is the
    slot's tag (``worker.shards``), so no script crosses slots; the reaper walks the shards in use."""
    return f"{PREFIX}{name}" if not shard else f"{PREFIX}{{{shard}}}:{name}"


def shards() -> str:
    """Set: the slot tags of every shard of the sharded sets in use (Redis Cluster only; it never shrinks)."""
    return f"{PREFIX}shards"


def invocation(app_name: str, user_id: str, invocation_id: str) -> str:
    """Hash: one invocation record (scalars raw, structured fields JSON); shares the session's hash tag."""
    return f"{PREFIX}{user_tag(app_name, user_id)}:i:{_part(invocation_id)}"


def user_invocations(app_name: str, user_id: str) -> str:
    """Sorted set: a user's invocation ids in one app, scored by creation time (the approval inbox)."""
    return f"{PREFIX}{user_tag(app_name, user_id)}:invocations"


def session_queue(app_name: str, user_id: str, session_id: str) -> str:
    """List: invocation ids waiting for or holding the session, FIFO; only the head may take the lease."""
    return _session_base(app_name, user_id, session_id) + ":queue"


def invocation_index() -> str:
    """Hash: invocation id -> JSON [app, user, session], so a bare id finds its record."""
    return f"{PREFIX}invocation_index"


def lease_expiries(shard: str = "") -> str:
    """Sorted set: running invocation id scored by its lease expiry (ms); the reaper scans it for dead workers.
    ``shard``: see ``sharded``."""
    return sharded("lease_expiries", shard)


def dispatch_due(shard: str = "") -> str:
    """Sorted set: invocation id scored by when its run job must have been claimed (ms), else it is re-sent.
    ``shard``: see ``sharded``."""
    return sharded("dispatch_due", shard)


def call_deadlines(shard: str = "") -> str:
    """Sorted set: ``invocation_id call_id`` scored by the pending call's deadline (unix seconds).
    ``shard``: see ``sharded``."""
    return sharded("call_deadlines", shard)


def invocation_journal(app_name: str, user_id: str, invocation_id: str) -> str:
    """Hash: function_call_id -> ``s`` (started) or ``c<response JSON>``; the tool idempotency records.

    Beside the record under the session's hash tag: it has no TTL while the invocation may still run, and
    expires with the record once the invocation is final."""
    return f"{PREFIX}{user_tag(app_name, user_id)}:i:{_part(invocation_id)}:journal"


def workers() -> str:
    """Hash: worker name -> JSON {pid, apps, started_at}; written when a worker is ready to consume."""
    return f"{PREFIX}workers"


def invocation_settled(app_name: str, user_id: str, invocation_id: str) -> str:
    """Stream: one entry each time the invocation settles (parked, completed, failed, cancelled); waiters block
    on it instead of reading every entry of the session stream."""
    return f"{PREFIX}{user_tag(app_name, user_id)}:i:{_part(invocation_id)}:settled"


# --- retention and listings ----------------------------------------------------------------------


def user_parked(app_name: str, user_id: str) -> str:
    """Sorted set: a user's parked invocation ids, scored by creation time (the approval inbox's own index)."""
    return f"{PREFIX}{user_tag(app_name, user_id)}:parked"


def user_session_ids(app_name: str, user_id: str) -> str:
    """Sorted set: a user's session ids, all scored 0, so a page is one ZRANGE BYLEX from a cursor."""
    return f"{PREFIX}{user_tag(app_name, user_id)}:session_ids"


def retention_due() -> str:
    """Sorted set: invocation id scored by when (ms) a sweeper should next look at it; every invocation has
    one entry from its enqueue until the sweeper removed the last trace of it."""
    return f"{PREFIX}retention_due"


def session_expiries() -> str:
    """Sorted set: JSON ``[app, user, session]`` scored by when (ms) the session may have been idle for the
    session TTL (only with a session TTL configured)."""
    return f"{PREFIX}session_expiries"


def workers_alive() -> str:
    """Sorted set: worker name scored by its last liveness beat (ms); fresh beats mean the worker is alive."""
    return f"{PREFIX}workers_alive"


# --- webhooks (worker.webhook_outbox) ------------------------------------------------------------


def webhook_due(shard: str = "") -> str:
    """Sorted set: webhook delivery id scored by when (ms) it is next tried; a claim pushes it past the send.
    ``shard``: see ``sharded`` (the status scripts name it; on a Cluster nothing is ever written to it)."""
    return sharded("webhooks:due", shard)


def webhook_outbox(shard: str = "") -> str:
    """Hash: webhook delivery id -> JSON of the notification (url, facts, attempts), until delivered or dead.
    ``shard``: as for ``webhook_due``."""
    return sharded("webhooks:outbox", shard)


def webhook_dead() -> str:
    """Sorted set: ``<dead ms, zero-padded>:<delivery id>``, all scored 0 (a page is one ZREVRANGEBYLEX)."""
    return f"{PREFIX}webhooks:dead"


def webhook_dead_entries() -> str:
    """Hash: delivery id -> JSON of a dead-lettered notification (with its last error)."""
    return f"{PREFIX}webhooks:dead_entries"


def webhook_stats() -> str:
    """Hash: delivered / failed / dead counters of every worker's deliveries (for /metrics)."""
    return f"{PREFIX}webhooks:stats"
