"""Keys of sessions: history, state, stream, lease and fence, queue, and the per-user and per-app indexes.

A user's session keys share the hash tag ``{app/user}`` so one Lua script can commit an event on Redis Cluster
too; app-scoped state lives under the app's own tag (an ``app:`` delta pays one extra round trip there).
"""

from __future__ import annotations

from ._naming import PREFIX, _part, _session_base, app_tag, sharded, user_tag


def session_meta(app_name: str, user_id: str, session_id: str) -> str:
    """Hash: id, app, user, version, last_update_time, max_ts, and fence: the fencing token, bumped on every
    lease acquisition (and cancel of a running invocation); commits carry the token they hold
    (``lua/lib/fence.lua``)."""
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
    """Integer: where sessions stored before the meta hash's ``fence`` field keep their fencing token, until
    their next claim moves it into that field (``lua/lib/fence.lua``); absent for every other session."""
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


def app_users(app_name: str, shard: str = "") -> str:
    """Set: user ids that have sessions in the app (for list_sessions without a user). On one node (``shard``
    '') the one key ``agentq:{app}:users``; on a Cluster one copy per shard, in the user's slot (``sharded``),
    written by the session's creation script and merged by readers."""
    if not shard:
        return f"{PREFIX}{app_tag(app_name)}:users"
    return sharded(f"app_users:{_part(app_name)}", shard)


def session_spans(app_name: str, user_id: str, session_id: str) -> str:
    """List: one JSON array of trace spans per finished run of the session's invocations (runtime.tracing)."""
    return _session_base(app_name, user_id, session_id) + ":spans"


def session_event_times(app_name: str, user_id: str, session_id: str) -> str:
    """Sorted set: event index (zero-padded) scored by the running maximum of event timestamps, one checkpoint
    every 16 events (one per event in sessions stored before; ``lua/lib/time_index.lua``).

    Lets ``get_session(after_timestamp=...)`` find the first event to load reading at most 15 events of history.
    """
    return _session_base(app_name, user_id, session_id) + ":times"


def session_active_invocations(app_name: str, user_id: str, session_id: str) -> str:
    """Sorted set: invocation id scored by the millisecond part of its first stream entry id.

    Stream trimming never drops entries at or after the lowest score (the oldest active invocation).
    """
    return _session_base(app_name, user_id, session_id) + ":active"


def session_queue(app_name: str, user_id: str, session_id: str) -> str:
    """List: invocation ids waiting for or holding the session, FIFO; only the head may take the lease."""
    return _session_base(app_name, user_id, session_id) + ":queue"


def session_children(app_name: str, user_id: str, session_id: str) -> str:
    """Hash: child session id -> the invocation id of this session whose AgentTool call made it; the children
    are deleted with the session and with that invocation's cancellation (``worker.records.child_sessions``)."""
    return _session_base(app_name, user_id, session_id) + ":children"


def user_session_ids(app_name: str, user_id: str) -> str:
    """Sorted set: a user's session ids, all scored 0, so a page is one ZRANGE BYLEX from a cursor."""
    return f"{PREFIX}{user_tag(app_name, user_id)}:session_ids"


def session_expiries(shard: str = "") -> str:
    """Sorted set: JSON ``[app, user, session]`` scored by when (ms) the session may have been idle for the
    session TTL (only with a session TTL configured). ``shard``: see ``sharded`` (the user's)."""
    return sharded("session_expiries", shard)
