"""Shards of the reaper's and watchdog's sets on Redis Cluster: one per hash slot, beside the users it serves.

The status scripts (``runtime/redis_store/lua/invocations/``) update the dispatch watchdog, the lease expiries,
the call deadlines and the webhook outbox (with its dead letters and counters, ``worker.webhooks.outbox``) in the
same step as a session's keys. On one Redis node those are single global keys. On a
Cluster a script may only touch keys of one slot, so each of those sets has one copy per slot in use, named
with a *slot tag*: a short string that hashes to that slot (``agentq:{s:1f2}:dispatch_due`` lives in the same
slot as every ``agentq:{app/user}:...`` key whose tag hashes there). Users who share a slot share its shard.

``keys.shards()`` lists the tags in use, so the readers know where to look. A shard is registered before
anything is written to it (``register``, by every enqueue: every later entry of an invocation is in its user's
shard). A process SADDs a shard again at most once per ``REFRESH_S`` (``ShardRegistry``): the one key takes a
write per shard and process a minute, not one per enqueue, and a list lost with a master comes back within
that. A session's creation registers its user's shard too (once per process, for ``keys.app_users`` and
``keys.session_expiries``). A shard is never removed: there are at most 16384, and the reaper reads only the
due ones (``worker.config.due_shards``).
"""

from __future__ import annotations

import time

from runtime.redis_store import keys
from runtime.redis_store.codec import text
from runtime.redis_store.slots import shard_of, slot_tag

__all__ = ["ShardRegistry", "app_users", "in_use", "is_cluster_client", "register", "shard_of", "slot_tag"]


def is_cluster_client(client) -> bool:
    """True for a Redis Cluster client (the readers that are handed a client, not a store, ask it)."""
    from redis.asyncio.cluster import RedisCluster

    return isinstance(client, RedisCluster)


REFRESH_S = 60.0
"""How often one process lists a shard it writes to again (so a list lost with a master comes back)."""


class ShardRegistry:
    """The shards one process listed lately: each is SADDed at most once per ``REFRESH_S`` (a busy deployment's
    enqueues would otherwise all write to the one ``keys.shards()``); at most 16384 entries."""

    def __init__(self) -> None:
        self._until: dict[str, float] = {}

    async def register(self, client, shard: str) -> None:
        """``register``, unless this process did so for ``shard`` within ``REFRESH_S``."""
        if not shard:  # one node: nothing to list
            return
        now = time.monotonic()
        if self._until.get(shard, 0.0) > now:
            return
        await register(client, shard)
        self._until[shard] = now + REFRESH_S


async def register(client, shard: str) -> None:
    """List ``shard`` before anything is written to it (nothing to do on one node, shard '')."""
    if shard:
        await client.sadd(keys.shards(), shard)


async def in_use(client, *, cluster: bool) -> list[str]:
    """Every shard in use: [''] on one node, the registered tags on a Cluster."""
    if not cluster:
        return [""]
    return sorted(await client.smembers(keys.shards()))


async def app_users(client, apps: list[str]) -> list[set[str]]:
    """For each of ``apps``, the users with a session there (on a Cluster merged over the shards in use)."""
    shards = await in_use(client, cluster=is_cluster_client(client))
    pipe = client.pipeline(transaction=False)
    for app in apps:
        for shard in shards:
            pipe.smembers(keys.app_users(app, shard))
    found = await pipe.execute() if apps else []
    per_app = len(shards)
    return [{text(user) for members in found[n * per_app : (n + 1) * per_app] for user in members}
            for n in range(len(apps))]
