"""Slot tags of Redis Cluster: a short string that hashes to a given slot, so a cross-session set can have one
copy per slot in use beside the users it serves (``keys.sharded``; ``worker.config.shards`` says who writes them).

Here, below the session service, because sessions keep per-shard copies too (``keys.app_users``,
``keys.session_expiries``).
"""

from __future__ import annotations

import functools

from redis.crc import REDIS_CLUSTER_HASH_SLOTS, key_slot

from . import keys


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
    """The shard of a user's cross-session entries: '' on one node (the global keys), else the tag of the user's
    slot."""
    if not cluster:
        return ""
    return slot_tag(key_slot(keys.user_tag(app, user).encode()))
