"""Every Lua script agentq runs, loaded from its ``.lua`` file under ``lua/`` (the header of each file names its
KEYS and ARGV, which callers pass by name: see ``lua.script``).

Scope: each script touches only keys of one user's hash tag, and the cross-session sets it keeps in step. On
one node those sets are global keys and app state rides along (KEYS beyond the user's), so an ``app:`` delta
costs no extra trip; on Redis Cluster the caller names the user's shard of each set (``worker.config.shards``: same
slot) and leaves app state out, so no script crosses slots.
"""

from __future__ import annotations

from .lua import LuaScript

# Sessions and their streams (runtime.sessions.redis_session_service, redis_store.streams).
CREATE_SESSION = LuaScript("sessions/create_session")
COMMIT_EVENT = LuaScript("sessions/commit_event")
READ_SESSION = LuaScript("sessions/read_session")
READ_SESSION_SINCE = LuaScript("sessions/read_session_since")
PUBLISH_ENTRY = LuaScript("sessions/publish_entry")

# The invocation lifecycle (worker.store, worker.lease, worker.journal, worker.deletion). The session lease
# holds ``<invocation_id>|<fence>``: the fencing token makes a stale holder (paused, partitioned, or reaped and
# superseded under the same invocation id) unable to heartbeat, settle or record anything. Every status change
# XADDs its status entry in the same script, so a follower never misses the entry that settles an invocation.
ENQUEUE = LuaScript("invocations/enqueue")
ACQUIRE = LuaScript("invocations/acquire")
HEARTBEAT = LuaScript("invocations/heartbeat")
HEARTBEAT_MANY = LuaScript("invocations/heartbeat_many")
ADD_PENDING = LuaScript("invocations/add_pending")
CONSUME = LuaScript("invocations/consume")
SETTLE = LuaScript("invocations/settle")
RESPOND = LuaScript("invocations/respond")
CANCEL = LuaScript("invocations/cancel")
CANCEL_SESSION = LuaScript("invocations/cancel_session")
RELEASE = LuaScript("invocations/release")
DELETE_SESSION = LuaScript("invocations/delete_session")
JOURNAL_BEGIN = LuaScript("invocations/journal_begin")
ADD_APPROVAL = LuaScript("invocations/add_approval")
FORGET = LuaScript("invocations/forget")

# Double texting and rewinds (worker.double_texting, worker.rewind): a strategy's cancels and the enqueue in one
# step; a rewind holds the session lease so nothing runs on the session while it is put back.
ENQUEUE_STRATEGY = LuaScript("invocations/enqueue_strategy")
REWIND_BEGIN = LuaScript("invocations/rewind_begin")
REWIND_END = LuaScript("invocations/rewind_end")

# The webhook outbox (worker.webhook_outbox); notifications are added by the status scripts' ``notify``.
WEBHOOK_CLAIM = LuaScript("webhooks/claim")
WEBHOOK_DELIVERED = LuaScript("webhooks/delivered")
WEBHOOK_RETRY = LuaScript("webhooks/retry")
WEBHOOK_DEAD = LuaScript("webhooks/dead")
WEBHOOK_REDELIVER = LuaScript("webhooks/redeliver")

# Taking due entries: the due-shards index of the reaper on Redis Cluster (worker.due_shards), and the reaper's
# own sets (worker.fleet.reaper).
DUE_CLAIM = LuaScript("due/claim")
DUE_SETTLE = LuaScript("due/settle")
DUE_DROP = LuaScript("due/drop")

# Enqueue rate limits and in-flight quotas (api.rate_limits).
RATE_ADMIT = LuaScript("rate/admit")

# Paged reads (worker.listing, worker.inbox).
SESSION_IDS = LuaScript("listings/session_ids")
PARKED_PAGE = LuaScript("listings/parked_page")
PARKED_FINGERPRINT = LuaScript("listings/parked_fingerprint")

# Schedules (worker.schedules): a tick is fired, and its invocation enqueued, in one step.
SCHEDULE_SAVE = LuaScript("schedules/save")
SCHEDULE_DELETE = LuaScript("schedules/delete")
SCHEDULE_FIRE = LuaScript("schedules/fire")

# Artifact saves from a run, fenced by the run's lease (runtime.artifacts.redis_artifact_service).
ARTIFACT_SAVE = LuaScript("artifacts/save")

# Layout migrations (worker.migrate): one record brought forward per call, idempotent; layout 1's per-status
# counters turned into flows, a batch of fields per call, idempotent.
MIGRATE_RECORD = LuaScript("layout/migrate_record")
FLOW_COUNTS = LuaScript("layout/flow_counts")

ALL = {script.name: script for script in (
    CREATE_SESSION, COMMIT_EVENT, READ_SESSION, READ_SESSION_SINCE, PUBLISH_ENTRY,
    ENQUEUE, ACQUIRE, HEARTBEAT, HEARTBEAT_MANY, ADD_PENDING, CONSUME, SETTLE, RESPOND, CANCEL, CANCEL_SESSION, RELEASE,
    DELETE_SESSION, JOURNAL_BEGIN, ADD_APPROVAL, FORGET, ENQUEUE_STRATEGY, REWIND_BEGIN, REWIND_END,
    WEBHOOK_CLAIM, WEBHOOK_DELIVERED, WEBHOOK_RETRY, WEBHOOK_DEAD, WEBHOOK_REDELIVER,
    SESSION_IDS, PARKED_PAGE, PARKED_FINGERPRINT, RATE_ADMIT, DUE_CLAIM, DUE_SETTLE, DUE_DROP,
    SCHEDULE_SAVE, SCHEDULE_DELETE, SCHEDULE_FIRE,
    ARTIFACT_SAVE, MIGRATE_RECORD, FLOW_COUNTS,
)}
"""Every script by its file name (a test checks each ``.lua`` file is here and loads)."""
