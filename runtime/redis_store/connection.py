"""One redis.asyncio client per event loop: an asyncio connection cannot outlive or cross its loop.

``Runner.run()`` (sync) and some test setups run a fresh loop per call; services built from a URL keep
working across them. A client handed in by the caller is used as is.
"""

from __future__ import annotations

import asyncio
import weakref

import redis.asyncio as aioredis
from redis.backoff import NoBackoff
from redis.retry import Retry

from ..errors import UsageError
from .blocking_reads import BlockingReads
from .cluster_mux import ClusterMux
from .mux import MuxConnection
from .redis_url import is_cluster, is_sentinel, redis_client_from_url

MAX_CONNECTIONS = 1024
"""Connections per loop and URL; commands beyond this many in flight wait for one to free up."""

def cluster_options() -> dict:
    """How agentq's Redis Cluster clients are made, beside redis-py's defaults, and why.

    - ``retry``: none. redis-py would send a command again after a dropped connection, and a script whose reply
      was lost may already have run (a tool journal mark, an enqueue): done twice, it would turn a tool call
      into one in doubt, or worse. A dropped command surfaces instead as the store being away
      (``availability``), and the worker's own recovery (hand back, resume from committed events) takes over.
    - ``reinitialize_steps=0``: a MOVED reply only moves that slot in the client's map. By default every fifth
      MOVED makes the client close every connection, in-flight commands included, which during a slot
      migration (where MOVED and ASK replies are routine) cut off commands that had already run."""
    return {"retry": Retry(NoBackoff(), 0), "reinitialize_steps": 0}


class LoopClients:
    """Hands out the client for the running loop, creating it from ``url`` on first use."""

    def __init__(self, url: str | None, client=None, *, max_connections: int = MAX_CONNECTIONS):
        if url is None and client is None:
            raise UsageError("a Redis-backed service needs a url (redis://...) or a client")
        self._url = url
        self._fixed = client
        self._max_connections = max_connections
        self._by_loop: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
        self._mux_by_loop: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
        self._last_mux: tuple[weakref.ref, MuxConnection | ClusterMux] | None = None  # the last loop's, looked up per command
        self._blocking_by_loop: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()

    @property
    def is_cluster(self) -> bool:
        """True for a Redis Cluster, by URL or handed-in client (app-scoped keys then need their own trip)."""
        if self._fixed is not None:
            return isinstance(self._fixed, aioredis.RedisCluster)
        return is_cluster(self._url)

    def get(self):
        """The client to use from the running loop."""
        if self._fixed is not None:
            return self._fixed
        loop = asyncio.get_running_loop()
        client = self._by_loop.get(loop)
        if client is None:
            # A blocking pool: past max_connections a command waits for a free connection instead of failing
            # (redis-py's default pool raises MaxConnectionsError at 100 concurrent commands). No socket timeout:
            # blocking stream reads wait longer than any fixed timeout, and asyncio's wait_for around every
            # reply costs a third of a command's client CPU.
            if is_sentinel(self._url) or is_cluster(self._url):
                # Sentinel: the master as the sentinels name it, found again after a failover. Cluster: each
                # command goes to the master of its keys' slot (redis-py's pool per node), for what the mux does
                # not do there: blocking reads, pub/sub, redis-py's pipelines and typed replies.
                extra = cluster_options() if is_cluster(self._url) else {}
                client = self._by_loop[loop] = redis_client_from_url(
                    self._url, decode_responses=True, max_connections=self._max_connections, socket_timeout=None,
                    **extra)
                return client
            pool = aioredis.BlockingConnectionPool.from_url(
                self._url, decode_responses=True, max_connections=self._max_connections, timeout=None,
                socket_timeout=None, socket_connect_timeout=5,
            )
            client = aioredis.Redis.from_pool(pool)
            self._by_loop[loop] = client
        return client

    def mux(self):
        """The pipelined connection for the running loop's non-blocking scripts (the fixed client if one was given).

        On a Cluster: a ``ClusterMux``, one pipelined connection per master, each command sent to its slot's master
        (commands for one user keep their order: their keys share a slot)."""
        if self._fixed is not None:
            return self.get()
        loop = asyncio.get_running_loop()
        last = self._last_mux  # set only once a mux was made for this URL
        if last is not None and last[0]() is loop:
            return last[1]
        cluster = is_cluster(self._url)
        if not cluster and not MuxConnection.supports(self._url):
            return self.get()
        mux = self._mux_by_loop.get(loop)
        if mux is None:
            mux = self._mux_by_loop[loop] = ClusterMux(self._url) if cluster else MuxConnection(self._url)
        self._last_mux = (weakref.ref(loop), mux)
        return mux

    def blocking(self):
        """What the running loop's blocking stream reads go through: a ``BlockingReads`` (one connection per read
        at a time, replies as Redis sent them) on one Redis or Sentinel, else the redis.asyncio client (a Cluster,
        TLS, or a client handed in)."""
        if self._fixed is not None or is_cluster(self._url) or not MuxConnection.supports(self._url):
            return self.get()
        loop = asyncio.get_running_loop()
        reads = self._blocking_by_loop.get(loop)
        if reads is None:
            reads = self._blocking_by_loop[loop] = BlockingReads(self._url, max_connections=self._max_connections)
        return reads

    async def aclose(self) -> None:
        """Close the running loop's own connections (a client handed in belongs to the caller)."""
        if self._fixed is not None:
            return
        loop = asyncio.get_running_loop()
        reads = self._blocking_by_loop.pop(loop, None)
        if reads is not None:
            await reads.aclose()
        mux = self._mux_by_loop.pop(loop, None)
        self._last_mux = None
        if mux is not None:
            await mux.aclose()
        client = self._by_loop.pop(loop, None)
        if client is not None:
            await client.aclose()
