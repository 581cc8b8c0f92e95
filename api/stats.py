"""Scrape-time figures for /metrics: invocations by status and the broker queue's depth, read from Redis."""

from __future__ import annotations

from typing import Any

from worker import webhook_outbox
from worker.status_counts import count_by_status


def redis_stats_provider(redis: Any, *, queue_name: str):
    """A StatsProvider reading invocation statuses (sampled: worker.status_counts) and LLEN of the run queue."""

    async def provider() -> dict[str, dict[str, float]]:
        counts, _sampled = await count_by_status(redis)
        return {
            "invocations": {status: float(count) for status, count in counts.items()},
            "queue_depth": {queue_name: float(await redis.llen(queue_name))},
            "webhooks": await webhook_outbox.stats(redis),
        }

    return provider

