"""Shards of the reaper's and watchdog's sets on Redis Cluster: one per hash slot, beside the users it serves.

The status scripts (``runtime/redis_store/lua/invocations/``) update the dispatch watchdog, the lease expiries,
the call deadlines and the webhook outbox (with its dead letters and counters, ``worker.webhook_outbox``) in the
same step as a session's keys. On one Redis node those are single global keys. On a
Cluster a script may only touch keys of one slot, so each of those sets has one copy per slot in use, named
with a *slot tag*: a short string that hashes to that slot (``agentq:{s:1f2}:dispatch_due`` lives in the same
slot as every ``agentq:{app/user}:...`` key whose tag hashes there). Users who share a slot share its shard.

``keys.shards()`` lists the tags in use, so the reaper knows where to look. A shard is registered before
anything is written to it (``register``, by every enqueue: every later entry of an invocation is in its user's
shard; one SADD each time, so the list comes back even if it was lost), and never removed: there are at most
16384, and an empty one costs a reaper one short read.
"""

from __future__ import annotations

import functools

from redis.crc import REDIS_CLUSTER_HASH_SLOTS, key_slot

from runtime.redis_store import keys


@functools.cache
def _slot_tags() -> tuple[str, ...]:
    """For every slot, the first ``s:<hex>`` that hashes to it (built once per process: about a quarter second,
    and only on a Cluster)."""
    tags: dict[int, str] = {}
    candidate = 0
    while len(tags) < REDIS_CLUSTER_HASH_SLOTS:
        tag = f"s:{candidate:x}"
        tags.setdefault(key_slot(tag.encode()), tag)
        candidate += 1
    return tuple(tags[slot] for slot in range(REDIS_CLUSTER_HASH_SLOTS))


def slot_tag(slot: int) -> str:
    """The tag whose keys land in hash slot ``slot``."""
    return _slot_tags()[slot]


def shard_of(app: str, user: str, *, cluster: bool) -> str:
    """The shard of a user's invocations: '' on one node (the global keys), else the tag of the user's slot."""
    if not cluster:
        return ""
    return slot_tag(key_slot(keys.user_tag(app, user).encode()))


def is_cluster_client(client) -> bool:
    """True for a Redis Cluster client (the readers that are handed a client, not a store, ask it)."""
    from redis.asyncio.cluster import RedisCluster

    return isinstance(client, RedisCluster)


async def register(client, shard: str) -> None:
    """List ``shard`` before anything is written to it (nothing to do on one node, shard '')."""
    if shard:
        await client.sadd(keys.shards(), shard)


async def in_use(client, *, cluster: bool) -> list[str]:
    """Every shard in use: [''] on one node, the registered tags on a Cluster."""
    if not cluster:
        return [""]
    return sorted(await client.smembers(keys.shards()))
