"""Invocations counted by status, exactly, for /metrics, the ops summary and ``agentq status``.

The status scripts keep the counts (``keys.status_counts``, ``lua/lib/status_counts.lua``) in the same step as
each transition, from the enqueue that creates a record to the sweep that removes it (``lua/invocations/
forget.lua``), so a read is a few HMGETs: one per shard in use (one on a single node), whatever the number of
invocations. Three scopes: the whole deployment, some apps, or some users of some apps.
"""

from __future__ import annotations

import asyncio
from typing import Any

from runtime.redis_store import keys
from runtime.statuses import STATUSES
from worker.config.shards import in_use


def count_fields(apps: list[str] | None = None, users: list[str] | None = None) -> dict[str, list[str]]:
    """The counter fields to add up for each status: every app's (``apps`` None), those ``apps``' (``users``
    None), or those of ``users`` in ``apps``. Names are escaped as in the keys' hash tags, as the scripts do."""
    if apps is None:
        return {status: [status] for status in STATUSES}
    if users is None:
        scopes = ["a:" + keys.app_tag(app)[1:-1] for app in apps]
    else:
        scopes = ["u:" + keys.user_tag(app, user)[1:-1] for app in apps for user in users]
    return {status: [f"{scope}:{status}" for scope in scopes] for status in STATUSES}


async def count_by_status(redis: Any, *, cluster: bool, apps: list[str] | None = None,
                          users: list[str] | None = None) -> dict[str, int]:
    """Every status with how many invocations have it now, in the scope of ``count_fields``."""
    fields = count_fields(apps, users)
    flat = [field for status in STATUSES for field in fields[status]]
    counts = dict.fromkeys(STATUSES, 0)
    if not flat:
        return counts
    shards = await in_use(redis, cluster=cluster)
    replies = await asyncio.gather(*(redis.hmget(keys.status_counts(shard), flat) for shard in shards))
    per_status = len(flat) // len(STATUSES)  # the same number of fields for each status, in STATUSES order
    for reply in replies:
        for n, status in enumerate(STATUSES):
            counts[status] += sum(int(value or 0) for value in reply[n * per_status : (n + 1) * per_status])
    return counts


UNDERFLOWS = "!underflows"
"""The field of ``keys.status_counts`` counting transitions that would have moved a counter below zero (a bug;
``lua/lib/status_counts.lua`` leaves the counter at zero and logs it in the Redis log)."""


async def count_underflows(redis: Any, *, cluster: bool) -> int:
    """How many times a status count would have gone below zero, over every shard in use (0 when exact)."""
    shards = await in_use(redis, cluster=cluster)
    replies = await asyncio.gather(*(redis.hget(keys.status_counts(shard), UNDERFLOWS) for shard in shards))
    return sum(int(value or 0) for value in replies)
