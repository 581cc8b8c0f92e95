"""Keys of workers: who announced itself, and who beat recently."""

from __future__ import annotations

from ._naming import PREFIX, sharded


def workers() -> str:
    """Hash: worker name -> JSON {pid, apps, started_at}; written when a worker is ready to consume."""
    return f"{PREFIX}workers"


def workers_alive(shard: str = "") -> str:
    """Sorted set: worker name scored by its last liveness beat (ms); fresh beats mean the worker is alive.
    ``shard``: '' on one node; on a Cluster one of a fixed few (``worker.workers_alive``), picked by the worker's
    name, so the fleet's beats spread over the masters (see ``sharded``)."""
    return sharded("workers_alive", shard)
