"""Worker liveness: every worker process beats once a second; "alive" means it beat within ``ALIVE_S``.

``keys.workers()`` says which workers announced themselves when ready; it cannot tell a working worker from one
that was SIGKILLed or cut off. So each worker's host loop also scores its name in ``keys.workers_alive()`` with
the time of its latest beat: a reader needs one ZRANGE whatever the number of workers that ever ran, and names
that stopped beating a day ago are dropped by the beats themselves.

On Redis Cluster the beats go to one of ``CLUSTER_SHARDS`` copies, picked by the worker's name, so a large fleet's
beats do not all land on one master; a reader reads them all (one pipelined ZRANGE each).
"""

from __future__ import annotations

import json
import time
import zlib
from dataclasses import dataclass
from typing import Any

from runtime.redis_store import keys
from runtime.redis_store.codec import text
from worker.config.shards import is_cluster_client

BEAT_S = 1.0
"""How often a worker beats."""
ALIVE_S = 5.0
"""A worker whose latest beat is older than this is not alive (a few missed beats are tolerated)."""
FORGET_S = 86_400.0
"""Beats older than this are removed."""
CLUSTER_SHARDS = 16
"""Copies of the beats set on a Cluster (a fixed few: a reader reads every one)."""


def beats_shard(name: str, *, cluster: bool) -> str:
    """The copy a worker beats in: '' on one node, ``w:<n>`` on a Cluster (stable for a name)."""
    return f"w:{zlib.crc32(name.encode()) % CLUSTER_SHARDS}" if cluster else ""


def _all_shards(cluster: bool) -> list[str]:
    return [f"w:{n}" for n in range(CLUSTER_SHARDS)] if cluster else [""]


@dataclass(frozen=True, kw_only=True)
class AliveWorker:
    """A worker that beat within ``ALIVE_S``: its name, when it last beat, and the apps it announced."""

    name: str
    last_beat: float
    apps: list[str]
    announced: bool = True
    """False while it starts: it beats from when its host is built, and announces its apps only once it consumes
    (worker.running.worker_lifecycle), so which apps it serves cannot be told yet."""


def beater(store: Any, name: str):
    """The step a worker host runs every ``BEAT_S``: score ``name`` with now, drop long-silent names."""

    beats = keys.workers_alive(beats_shard(name, cluster=store.clients.is_cluster))

    async def alive_beat() -> None:
        now_ms = int(time.time() * 1000)
        replies = await store.batch(
            ("ZADD", beats, now_ms, name),
            ("ZREMRANGEBYSCORE", beats, "-inf", now_ms - int(FORGET_S * 1000)),
        )
        failed = next((reply for reply in replies if isinstance(reply, Exception)), None)
        if failed is not None:
            raise failed

    return alive_beat


def announce(client: Any, name: str, entry: dict[str, Any]) -> None:
    """Register worker ``name`` in ``keys.workers()`` with ``entry`` (its apps), beating first (``client``: a sync
    redis-py client). Its host beats every ``BEAT_S`` from when it was built, first after one period; a worker that
    is ready sooner would consume while readers still see no worker alive (the demo's first invocations were
    told "no worker serving app ... is alive" while it ran them). Beat, then announce: announced means alive."""
    from redis.cluster import RedisCluster

    beats = keys.workers_alive(beats_shard(name, cluster=isinstance(client, RedisCluster)))
    client.zadd(beats, {name: int(time.time() * 1000)})
    client.hset(keys.workers(), name, json.dumps(entry))


async def alive_workers(redis: Any, *, now: float | None = None) -> list[AliveWorker]:
    """The workers alive now, by name (``redis``: any redis.asyncio client, decoded replies or not)."""
    since_ms = int(((time.time() if now is None else now) - ALIVE_S) * 1000)
    pipe = redis.pipeline(transaction=False)
    for shard in _all_shards(is_cluster_client(redis)):
        pipe.zrangebyscore(keys.workers_alive(shard), since_ms, "+inf", withscores=True)
    beats = [(text(name), score / 1000) for reply in await pipe.execute() for name, score in reply]
    announced = await redis.hmget(keys.workers(), [name for name, _ in beats]) if beats else []
    workers = [AliveWorker(name=name, last_beat=last_beat, apps=_apps(info), announced=info is not None)
               for (name, last_beat), info in zip(beats, announced, strict=True)]
    return sorted(workers, key=lambda worker: worker.name)


async def announced_apps(redis: Any) -> list[str]:
    """The apps of every worker that announced itself in ``keys.workers()``, alive or not (a stopped worker's parked
    invocations still wait for an answer), sorted."""
    return sorted({app for info in (await redis.hgetall(keys.workers())).values() for app in _apps(info)})


def _apps(info: Any) -> list[str]:
    """The apps of a ``keys.workers()`` entry (none for a worker that beats but did not announce itself)."""
    try:
        return [str(app) for app in json.loads(info).get("apps", [])] if info else []
    except (ValueError, AttributeError):
        return []
