"""Build the production services of the API on one Redis: sessions, artifacts, the invocation queue, all from one
worker.client.AgentqClient."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from api.deps import Services
from api.views.metrics import StatsProvider


@dataclass(kw_only=True)
class RedisBackedServices:
    """The services, the /metrics stats provider, and how to close their connections."""

    services: Services
    stats_provider: StatsProvider
    client: Any

    async def aclose(self) -> None:
        """Close every Redis connection the services opened (the client owns them all)."""
        await self.client.aclose()


def redis_services(redis_url: str, *, retention=None, webhooks=None, apps: list[str] | None = None
                   ) -> RedisBackedServices:
    """Services on ``redis_url`` (connections open lazily on the loop that first uses them); ``retention``: a
    worker.records.retention.RetentionPolicy, ``webhooks`` a worker.webhooks.config.WebhookSettings (default: the
    defaults); ``apps``: the apps served (their run queues are in /metrics before any worker announced them)."""
    from api.views.stats import client_stats_provider
    from worker.client import AgentqClient

    client = AgentqClient(redis_url, retention=retention, webhooks=webhooks)
    services = Services(session_service=client.session_service, artifact_service=client.artifact_service,
                        queue=client)
    return RedisBackedServices(services=services, stats_provider=client_stats_provider(client, apps), client=client)
