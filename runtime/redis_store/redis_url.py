"""Store URLs: ``redis://``, ``rediss://``, ``unix://`` for one server, Redis Sentinel for a failover group, or a
Redis Cluster.

A Sentinel URL lists the sentinels, ``;``-separated, then the database and the master's name::

    sentinel://h1:26379;sentinel://h2:26379;sentinel://h3:26379/0?master=mymaster

(``AGENTQ_REDIS_MASTER_NAME`` when the URL has no ``master``; a password as ``sentinel://:secret@h1:26379``
is the master's). Clients made from it ask the sentinels for the master on every (re)connect, so after a
failover the next command reaches the new master. The broker side (kombu's own sentinel transport) can reuse
``parse_store_url`` for the same URL.

A Cluster URL lists some of the cluster's nodes, ``,``-separated (one reachable node is enough to find the rest;
the others are tried when it is down); Redis Cluster has database 0 only::

    redis+cluster://h1:7000,h2:7001,h3:7002

(a password as ``redis+cluster://:secret@h1:7000,...``). Clients made from it send each command to the master
serving its keys' slot: redis-py's RedisCluster (``redis_client_from_url``), and for the store's scripts and other
non-blocking commands ``cluster_mux.ClusterMux``, a pipelined connection per master.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from urllib.parse import parse_qs, unquote, urlsplit

from ..errors import UsageError

MASTER_NAME_ENV = "AGENTQ_REDIS_MASTER_NAME"
SENTINEL_SOCKET_TIMEOUT_S = 1.0
"""How long a sentinel may take to answer who the master is (a dead sentinel is skipped after this)."""


@dataclass(frozen=True, kw_only=True)
class SentinelUrl:
    """A parsed Sentinel URL."""

    sentinels: list[tuple[str, int]]
    master: str
    db: int = 0
    username: str | None = None
    password: str | None = None


@dataclass(frozen=True, kw_only=True)
class ClusterUrl:
    """A parsed Cluster URL."""

    nodes: list[tuple[str, int]]
    username: str | None = None
    password: str | None = None


CLUSTER_SCHEME = "redis+cluster://"


def is_cluster(url: str) -> bool:
    """True for a ``redis+cluster://`` URL."""
    return url.startswith(CLUSTER_SCHEME)


def parse_cluster_url(url: str) -> ClusterUrl:
    """Parse a Cluster URL. Raises UsageError naming what is wrong."""
    if not is_cluster(url):
        raise UsageError(f"{url!r} is not a {CLUSTER_SCHEME} URL")
    rest = url[len(CLUSTER_SCHEME):]
    location, _, path = rest.partition("/")
    if path.partition("?")[0] not in ("", "0"):
        raise UsageError(f"Redis URL {url!r}: a Redis Cluster has database 0 only, not {path!r}")
    auth, _, hosts = location.rpartition("@")
    username, _, password = auth.partition(":")
    nodes: list[tuple[str, int]] = []
    for node in hosts.split(","):
        split = urlsplit("//" + node)  # urlsplit reads host and port (IPv6 in brackets too)
        try:
            port = split.port or 6379
        except ValueError as exc:
            raise UsageError(f"{node!r} in Redis URL {url!r} has a bad port: {exc}") from None
        if not split.hostname or split.path:
            raise UsageError(f"{node!r} in Redis URL {url!r} is not host:port")
        nodes.append((split.hostname, port))
    return ClusterUrl(nodes=nodes, username=unquote(username) or None, password=unquote(password) or None)


def is_sentinel(url: str) -> bool:
    """True for a ``sentinel://`` URL."""
    return url.startswith("sentinel://")


def parse_store_url(url: str, environ: dict[str, str] | None = None) -> SentinelUrl:
    """Parse a Sentinel URL. Raises UsageError naming what is wrong."""
    env = os.environ if environ is None else environ
    if not is_sentinel(url):
        raise UsageError(f"{url!r} is not a sentinel:// URL")
    parts = url.split(";")
    sentinels: list[tuple[str, int]] = []
    username = password = None
    tail = urlsplit(parts[-1])
    for part in parts:
        split = urlsplit(part)
        if split.scheme != "sentinel" or not split.hostname:
            raise UsageError(f"{part!r} in Redis URL {url!r} is not sentinel://host:port")
        try:
            sentinels.append((split.hostname, split.port or 26379))
        except ValueError as exc:
            raise UsageError(f"{part!r} in Redis URL {url!r} has a bad port: {exc}") from None
        username = username or (unquote(split.username) if split.username else None)
        password = password or (unquote(split.password) if split.password else None)
    query = parse_qs(tail.query)
    master = (query.get("master") or [env.get(MASTER_NAME_ENV, "")])[0].strip()
    if not master:
        raise UsageError(f"Redis URL {url!r} names no master: add ?master=<name> or set {MASTER_NAME_ENV}")
    path = tail.path.strip("/") or "0"
    if not path.isdigit():
        raise UsageError(f"Redis URL {url!r}: database {path!r} is not a number")
    return SentinelUrl(sentinels=sentinels, master=master, db=int(path), username=username, password=password)


def database(url: str) -> int:
    """The database number a store URL selects."""
    if is_sentinel(url):
        return parse_store_url(url).db
    if is_cluster(url):
        return 0
    from redis.connection import parse_url

    return int(parse_url(url).get("db") or 0)


def redis_client_from_url(url: str, *, asyncio: bool = True, **kwargs):
    """A redis-py client (``redis.asyncio`` unless ``asyncio=False``) for any store URL; ``kwargs`` go to the
    connections (``decode_responses``, ``socket_connect_timeout``, ...). Sentinel URLs give a client on the
    current master that re-discovers it after a failover; Cluster URLs a RedisCluster client."""
    if asyncio:
        import redis.asyncio as module
        from redis.asyncio.cluster import ClusterNode
        from redis.asyncio.sentinel import Sentinel
    else:
        import redis as module
        from redis.cluster import ClusterNode
        from redis.sentinel import Sentinel
    if is_cluster(url):
        parsed_cluster = parse_cluster_url(url)
        return module.RedisCluster(startup_nodes=[ClusterNode(host, port) for host, port in parsed_cluster.nodes],
                                   username=parsed_cluster.username, password=parsed_cluster.password, **kwargs)
    if not is_sentinel(url):
        return module.Redis.from_url(url, **kwargs)
    parsed = parse_store_url(url)
    auth = {"username": parsed.username, "password": parsed.password}
    sentinel = Sentinel(parsed.sentinels, sentinel_kwargs={"socket_timeout": SENTINEL_SOCKET_TIMEOUT_S},
                        socket_connect_timeout=kwargs.pop("socket_connect_timeout", 5), **kwargs)
    return sentinel.master_for(parsed.master, db=parsed.db, **auth)
