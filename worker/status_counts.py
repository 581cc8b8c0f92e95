"""Invocations counted by status, for /metrics, the ops summary and ``agentq status``.

Read from the id -> place index (``keys.invocation_index``) and each record's status, at most ``SCAN_LIMIT``
records per call so a scrape stays cheap on a big deployment; ``sampled`` says when there were more.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable
from typing import Any

from runtime.redis_store import keys
from runtime.redis_store.codec import text
from runtime.statuses import STATUSES

SCAN_LIMIT = 5_000
"""Invocation records counted per call, at most."""


async def count_by_status(redis: Any, *, visible: Callable[[str, str], bool] | None = None,
                          limit: int = SCAN_LIMIT) -> tuple[dict[str, int], bool]:
    """Every status with how many invocations have it (of those ``visible(app, user)`` allows; all when None),
    and whether the count stopped at ``limit`` records."""
    found: list[str] = []
    sampled = False
    async for invocation_id, raw in redis.hscan_iter(keys.invocation_index(), count=500):
        app, user, _session = json.loads(raw)
        if visible is not None and not visible(app, user):
            continue
        if len(found) >= limit:
            sampled = True
            break
        found.append(keys.invocation(app, user, text(invocation_id)))
    pipe = redis.pipeline(transaction=False)
    for key in found:
        pipe.hget(key, "status")
    statuses = Counter(text(status) for status in (await pipe.execute() if found else []) if status is not None)
    return {status: statuses.get(status, 0) for status in STATUSES}, sampled
