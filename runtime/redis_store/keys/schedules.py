"""Keys of schedules (worker.schedules): each schedule and its recent runs under the user's hash tag, beside
the invocations it enqueues, and the one set of due schedules every scheduler reads."""

from __future__ import annotations

from ._naming import PREFIX, _part, sharded, user_tag


def schedule(app_name: str, user_id: str, schedule_id: str) -> str:
    """Hash: one schedule (its spec as JSON, paused, next tick, revision, counters)."""
    return f"{PREFIX}{user_tag(app_name, user_id)}:sch:{_part(schedule_id)}"


def schedule_runs(app_name: str, user_id: str, schedule_id: str) -> str:
    """Sorted set: the invocation ids a schedule enqueued, scored by their tick (ms); the newest few are kept."""
    return f"{PREFIX}{user_tag(app_name, user_id)}:sch:{_part(schedule_id)}:runs"


def user_schedules(app_name: str, user_id: str) -> str:
    """Sorted set: a user's schedule ids in one app, scored by creation time (ms)."""
    return f"{PREFIX}{user_tag(app_name, user_id)}:schedules"


def schedules_due(shard: str = "") -> str:
    """Sorted set: JSON ``[app, user, schedule id]`` scored by when its next tick is due (ms, jitter included);
    a schedule that is paused or has ended is not in it. On one node (``shard`` '') the one key every scheduler
    reads; on a Cluster one copy per shard (the slot tag of the schedule's user, see ``sharded``), so the scripts
    that save, delete and fire a schedule stay in its user's slot, and the schedulers read every shard in use."""
    return f"{PREFIX}schedules:due" if not shard else sharded("schedules:due", shard)
