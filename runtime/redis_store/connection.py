"""One redis.asyncio client per event loop: an asyncio connection cannot outlive or cross its loop.

``Runner.run()`` (sync) and some test setups run a fresh loop per call; services built from a URL keep
working across them. A client handed in by the caller is used as is.
"""

from __future__ import annotations

import asyncio
import weakref

import redis.asyncio as aioredis

from ..errors import UsageError


class LoopClients:
    """Hands out the client for the running loop, creating it from ``url`` on first use."""

    def __init__(self, url: str | None, client=None):
        if url is None and client is None:
            raise UsageError("a Redis-backed service needs a url (redis://...) or a client")
        self._url = url
        self._fixed = client
        self._by_loop: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()

    @property
    def is_cluster(self) -> bool:
        """True when the fixed client is a Redis Cluster client (app-scoped keys then need their own trip)."""
        return isinstance(self._fixed, aioredis.RedisCluster)

    def get(self):
        """The client to use from the running loop."""
        if self._fixed is not None:
            return self._fixed
        loop = asyncio.get_running_loop()
        client = self._by_loop.get(loop)
        if client is None:
            # No socket timeout: blocking stream reads wait longer than any fixed timeout, and asyncio's
            # wait_for around every reply costs a third of a command's client CPU.
            client = aioredis.Redis.from_url(
                self._url, decode_responses=True, socket_timeout=None, socket_connect_timeout=5
            )
            self._by_loop[loop] = client
        return client

    async def aclose(self) -> None:
        """Close the running loop's own client (a client handed in belongs to the caller)."""
        if self._fixed is not None:
            return
        client = self._by_loop.pop(asyncio.get_running_loop(), None)
        if client is not None:
            await client.aclose()
