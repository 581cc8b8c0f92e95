"""Scrape-time figures for /metrics: invocations by status, the broker queue's depth and the webhook outbox, read
through the client (``client.ops``)."""

from __future__ import annotations

from typing import Any


def client_stats_provider(client: Any, apps: list[str] | None = None):
    """A StatsProvider reading invocation statuses (exact: worker.records.status_counts), each run queue's depth (the
    queues of ``apps``, the apps served, too) and the webhook figures of ``client`` (a worker.client.AgentqClient)."""

    async def provider() -> dict[str, dict[str, float]]:
        counts = await client.ops.status_counts()
        return {
            "invocations": {status: float(count) for status, count in counts.items()},
            "queue_depth": {queue: float(depth) for queue, depth in (await client.ops.queue_depths(apps)).items()},
            "webhooks": await client.ops.webhook_stats(),
            "status_count_underflows": float(await client.ops.status_count_underflows()),
        }

    return provider
