"""Build the production services of the API on one Redis: sessions, artifacts, the invocation queue."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .deps import Services
from .metrics import StatsProvider


@dataclass(kw_only=True)
class RedisBackedServices:
    """The services, the /metrics stats provider, and how to close their connections."""

    services: Services
    stats_provider: StatsProvider
    client: Any

    async def aclose(self) -> None:
        """Close every Redis connection the services opened."""
        await self.client.aclose()
        await self.services.artifact_service.aclose()
        await self.services.redis.aclose()


def redis_services(redis_url: str, *, retention=None, webhooks=None) -> RedisBackedServices:
    """Services on ``redis_url`` (connections open lazily on the loop that first uses them); ``retention``: a
    worker.retention.RetentionPolicy, ``webhooks`` a worker.webhook_config.WebhookSettings (default: the
    defaults)."""
    from runtime.artifacts import RedisArtifactService
    from runtime.redis_store.redis_url import redis_client_from_url
    from worker.client import AgentqClient
    from worker.dispatch import QUEUE

    from .stats import redis_stats_provider

    client = AgentqClient(redis_url, retention=retention, webhooks=webhooks)
    redis = redis_client_from_url(redis_url)  # sentinel:// too
    services = Services(
        session_service=client.session_service,
        artifact_service=RedisArtifactService(redis_url),
        queue=client,
        redis=redis,
    )
    return RedisBackedServices(
        services=services, stats_provider=redis_stats_provider(redis, queue_name=QUEUE), client=client
    )
