"""Every Redis key agentq uses, one module per key family, all importable from here (``keys.session_meta``).

All keys start with ``agentq:``. The keys of one user's sessions share the hash tag ``{app/user}`` so that
one Lua script can commit an event (history, session state, user state, version, fence check, stream entry)
on Redis Cluster too. App-scoped state is shared across users, so it lives under the app's own tag and an
event that carries an ``app:`` delta pays one extra round trip.
"""

from __future__ import annotations

from ._naming import PREFIX, app_tag, sharded, user_tag
from .a2a import a2a_task, a2a_tasks
from .artifacts import (
    artifact_index,
    artifact_versions,
)
from .credentials import (
    credential_request,
    oauth_state,
    user_credential,
    user_credential_keys,
)
from .invocations import (
    INBOX_CHANGES_MAXLEN,
    app_audit,
    app_parked,
    call_deadlines,
    dispatch_due,
    due_shards,
    due_shards_reseed,
    inbox_changes,
    invocation,
    invocation_index,
    invocation_journal,
    invocation_settled,
    lease_expiries,
    retention_due,
    shards,
    status_counts,
    user_invocations,
    user_parked,
)
from .rate_limits import (
    rate_bucket,
    rate_inflight,
)
from .replication import replication_mark
from .schedules import (
    schedule,
    schedule_runs,
    schedules_due,
    user_schedules,
)
from .sessions import (
    app_state,
    app_users,
    session_active_invocations,
    session_children,
    session_event_times,
    session_events,
    session_expiries,
    session_fence,
    session_lease,
    session_meta,
    session_queue,
    session_spans,
    session_state,
    session_stream,
    user_session_ids,
    user_sessions,
    user_state,
)
from .webhooks import (
    webhook_dead,
    webhook_dead_entries,
    webhook_due,
    webhook_due_shards,
    webhook_due_shards_reseed,
    webhook_outbox,
    webhook_stats,
)
from .workers import (
    app_catalog,
    run_backlog,
    workers,
    workers_alive,
)

__all__ = [
    "a2a_task",
    "a2a_tasks",
    "PREFIX",
    "app_tag",
    "sharded",
    "user_tag",
    "session_meta",
    "session_state",
    "session_events",
    "session_stream",
    "session_lease",
    "session_fence",
    "user_sessions",
    "user_state",
    "app_state",
    "app_users",
    "session_spans",
    "session_event_times",
    "session_active_invocations",
    "session_children",
    "session_queue",
    "user_session_ids",
    "session_expiries",
    "artifact_versions",
    "artifact_index",
    "user_credential",
    "user_credential_keys",
    "credential_request",
    "oauth_state",
    "shards",
    "invocation",
    "user_invocations",
    "invocation_index",
    "lease_expiries",
    "dispatch_due",
    "due_shards",
    "due_shards_reseed",
    "app_audit",
    "call_deadlines",
    "invocation_journal",
    "invocation_settled",
    "user_parked",
    "app_parked",
    "inbox_changes",
    "INBOX_CHANGES_MAXLEN",
    "status_counts",
    "retention_due",
    "workers",
    "workers_alive",
    "app_catalog",
    "run_backlog",
    "webhook_due",
    "webhook_outbox",
    "webhook_dead",
    "webhook_dead_entries",
    "webhook_stats",
    "webhook_due_shards",
    "webhook_due_shards_reseed",
    "rate_bucket",
    "rate_inflight",
    "replication_mark",
    "schedule",
    "schedule_runs",
    "user_schedules",
    "schedules_due",
]
