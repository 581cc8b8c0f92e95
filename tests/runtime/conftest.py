"""Fixtures shared by the runtime tests that talk to the package's redis-server."""

from __future__ import annotations

import pytest
import redis.asyncio as aioredis

from runtime.sessions import RedisSessionService


@pytest.fixture
async def service(redis_url):
    """A RedisSessionService on the test's redis-server (a module may define its own ``service`` instead)."""
    service = RedisSessionService(redis_url)
    yield service
    await service.aclose()


@pytest.fixture
async def raw(redis_url):
    """A plain redis-py client on the same server, decoding replies, to look at and tamper with the keys."""
    client = aioredis.Redis.from_url(redis_url, decode_responses=True)
    yield client
    await client.aclose()
