"""Keys of invocations: the record, its journal and settle stream (under the session's hash tag), the
per-user indexes, and the cross-session sets the reaper, watchdog and sweeper read."""

from __future__ import annotations

from ._naming import PREFIX, _part, app_tag, sharded, user_tag


def shards() -> str:
    """Set: the slot tags of every shard of the sharded sets in use (Redis Cluster only; it never shrinks)."""
    return f"{PREFIX}shards"


def due_shards(copy: str) -> str:
    """Sorted set: shard tag -> the earliest due time (ms) of anything in that shard's reaper and retention sets
    (a lower bound; Redis Cluster only), so a reaper pass reads only the shards that are due. ``copy``: one of a
    fixed few (``worker.config.due_shards``), picked by the shard's tag, so writers spread over the masters."""
    return sharded("due_shards", copy)


def due_shards_reseed() -> str:
    """String with a TTL: held by the one worker that re-seeds ``due_shards`` from every shard in use."""
    return f"{PREFIX}due_shards_reseed"


def invocation(app_name: str, user_id: str, invocation_id: str) -> str:
    """Hash: one invocation record (scalars raw, structured fields JSON); shares the session's hash tag."""
    return f"{PREFIX}{user_tag(app_name, user_id)}:i:{_part(invocation_id)}"


def user_invocations(app_name: str, user_id: str) -> str:
    """Sorted set: a user's invocation ids in one app, scored by creation time (the approval inbox)."""
    return f"{PREFIX}{user_tag(app_name, user_id)}:invocations"


def invocation_index(shard: str = "") -> str:
    """Hash: invocation id -> JSON [app, user, session], so a bare id finds its record. ``shard``: see
    ``sharded``; on a Cluster the shard is the slot tag of the id itself (``worker.records.store.InvocationStore.
    index_key``), so a bare id still finds its entry with one HGET and the entries spread over every slot."""
    return sharded("invocation_index", shard)


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


def invocation_settled(app_name: str, user_id: str, invocation_id: str) -> str:
    """Stream: one entry each time the invocation settles (parked, completed, failed, cancelled); waiters block
    on it instead of reading every entry of the session stream."""
    return f"{PREFIX}{user_tag(app_name, user_id)}:i:{_part(invocation_id)}:settled"


def user_parked(app_name: str, user_id: str) -> str:
    """Sorted set: a user's parked invocation ids, scored by creation time (the approval inbox's own index)."""
    return f"{PREFIX}{user_tag(app_name, user_id)}:parked"


def retention_due(shard: str = "") -> str:
    """Sorted set: invocation id scored by when (ms) a sweeper should next look at it; every invocation has
    one entry from its enqueue until the sweeper removed the last trace of it. ``shard``: see ``sharded`` (the
    user's, like ``lease_expiries``)."""
    return sharded("retention_due", shard)


def app_audit(app_name: str) -> str:
    """Sorted set: JSON ``[user, invocation_id]`` of each invocation with audit entries (answers, cancels,
    redeliveries), scored by its first entry's time (ms); the entries live on the record (``audit`` field), so
    they expire with it, and the sweeper removes the member when the record is gone (``worker.records.audit``)."""
    return f"{PREFIX}{app_tag(app_name)}:audit"


def inbox_changes(shard: str = "") -> str:
    """Stream: the inbox's change feed, one entry per change of what an approver sees (fields ``app``, ``user``,
    ``inv``, ``change``: ``parked``, ``answered``, ``expired``, ``cancelled``, ``settled``), appended by the status
    scripts in the same step as the change and trimmed to about ``INBOX_CHANGES_MAXLEN`` entries. API processes
    follow it with one blocking XREAD each (shared by every open page), never by polling. ``shard``: see
    ``sharded``."""
    return sharded("inbox_changes", shard)


INBOX_CHANGES_MAXLEN = 10_000
"""About how many entries each inbox change stream keeps (a follower that fell further behind reloads)."""


def app_parked(app_name: str, shard: str = "") -> str:
    """Sorted set: every parked invocation of an app across its users, members JSON ``[user, invocation_id]``
    scored by creation time (ms), kept by the status scripts beside each user's ``user_parked``; the inbox's
    first page for a wildcard approver reads it instead of every user's index. On one node the key is
    ``agentq:app_parked:<app>``; on a Cluster one copy per shard (``sharded``)."""
    return sharded(f"app_parked:{_part(app_name)}", shard)


def status_counts(shard: str = "") -> str:
    """Hash: exact invocation counts by status, kept by the status scripts in the same step as each transition
    as flows (``lua/lib/status_counts.lua``): field ``a:<app>:<from>><to>`` (one app) and
    ``u:<app>/<user>:<from>><to>`` (one user, names escaped as in ``user_tag``; ``''`` for no status), each the
    number of times an invocation went from ``from`` to ``to``; ``!apps`` lists the apps (the deployment's counts
    add them up). Readers (``worker.records.status_counts``) sum the shards in use (one on a single node)."""
    return sharded("status_counts", shard)
