"""Keys of webhook deliveries (worker.webhook_outbox): the outbox, its schedule, dead letters, counters."""

from __future__ import annotations

from ._naming import PREFIX, sharded


def webhook_due(shard: str = "") -> str:
    """Sorted set: webhook delivery id scored by when (ms) it is next tried; a claim pushes it past the send.
    ``shard``: see ``sharded`` (the status scripts name it; on a Cluster nothing is ever written to it)."""
    return sharded("webhooks:due", shard)


def webhook_outbox(shard: str = "") -> str:
    """Hash: webhook delivery id -> JSON of the notification (url, facts, attempts), until delivered or dead.
    ``shard``: as for ``webhook_due``."""
    return sharded("webhooks:outbox", shard)


def webhook_dead() -> str:
    """Sorted set: ``<dead ms, zero-padded>:<delivery id>``, all scored 0 (a page is one ZREVRANGEBYLEX)."""
    return f"{PREFIX}webhooks:dead"


def webhook_dead_entries() -> str:
    """Hash: delivery id -> JSON of a dead-lettered notification (with its last error)."""
    return f"{PREFIX}webhooks:dead_entries"


def webhook_stats() -> str:
    """Hash: delivered / failed / dead counters of every worker's deliveries (for /metrics)."""
    return f"{PREFIX}webhooks:stats"
