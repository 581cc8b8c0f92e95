"""Scrape-time figures for /metrics: invocations by status and the broker queue's depth, read from Redis."""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

from runtime.redis_store import keys
from runtime.statuses import STATUSES
from worker import webhook_outbox

SCAN_LIMIT = 5_000
"""At most this many invocation records are counted per scrape, so a scrape stays cheap on a big deployment."""



def redis_stats_provider(redis: Any, *, queue_name: str):
    """A StatsProvider reading invocation statuses (sampled up to SCAN_LIMIT) and LLEN of the run queue."""

    async def provider() -> dict[str, dict[str, float]]:
        where: list[tuple[str, list]] = []
        async for invocation_id, raw in redis.hscan_iter(keys.invocation_index(), count=500):
            where.append((_text(invocation_id), json.loads(raw)))
            if len(where) >= SCAN_LIMIT:
                break
        pipe = redis.pipeline(transaction=False)
        for invocation_id, (app, user, _session) in where:
            pipe.hget(keys.invocation(app, user, invocation_id), "status")
        pipe.llen(queue_name)
        replies = await pipe.execute()
        counts = Counter(_text(status) for status in replies[:-1] if status is not None)
        return {
            "invocations": {status: float(counts.get(status, 0)) for status in STATUSES},
            "queue_depth": {queue_name: float(replies[-1])},
            "webhooks": await webhook_outbox.stats(redis),
        }

    return provider


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)
