"""Keys of webhook deliveries (worker.webhooks.outbox): the outbox, its schedule, dead letters, counters.

Each has one copy per shard on Redis Cluster (``sharded``): the status scripts add a notification to the shard of
the invocation's user, and every later step of that notification (claim, retry, delivered, dead, redelivered)
stays in that one slot, so each is one script."""

from __future__ import annotations

from ._naming import PREFIX, sharded


def webhook_due(shard: str = "") -> str:
    """Sorted set: webhook delivery id scored by when (ms) it is next tried; a claim pushes it past the send.
    ``shard``: see ``sharded``."""
    return sharded("webhooks:due", shard)


def webhook_outbox(shard: str = "") -> str:
    """Hash: webhook delivery id -> JSON of the notification (url, facts, attempts), until delivered or dead.
    ``shard``: as for ``webhook_due``."""
    return sharded("webhooks:outbox", shard)


def webhook_dead(shard: str = "") -> str:
    """Sorted set: ``<dead ms, zero-padded>:<delivery id>``, all scored 0 (a page is one ZREVRANGEBYLEX; on a
    Cluster, one per shard, merged by the reader since the members sort the same way everywhere).
    ``shard``: as for ``webhook_due``."""
    return sharded("webhooks:dead", shard)


def webhook_dead_entries(shard: str = "") -> str:
    """Hash: delivery id -> JSON of a dead-lettered notification (with its last error).
    ``shard``: as for ``webhook_due``."""
    return sharded("webhooks:dead_entries", shard)


def webhook_stats(shard: str = "") -> str:
    """Hash: delivered / failed / dead counters of every worker's deliveries (for /metrics; readers sum the
    shards). ``shard``: as for ``webhook_due``."""
    return sharded("webhooks:stats", shard)


def webhook_due_shards(copy: str) -> str:
    """Sorted set on Redis Cluster: shard tag -> a lower bound (ms) of its earliest ``webhook_due`` entry, so a
    deliverer's pass visits only the shards with a due delivery (``worker.webhooks.due``); one of a fixed few
    copies, picked by the shard's tag."""
    return sharded("webhooks:due_shards", copy)


def webhook_due_shards_reseed() -> str:
    """String with a TTL: held by the one worker that re-seeds ``webhook_due_shards`` from every shard in use."""
    return f"{PREFIX}webhooks:due_shards_reseed"
