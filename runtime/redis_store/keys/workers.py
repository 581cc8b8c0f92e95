"""Keys of workers: who announced itself, who beat recently, and which apps' run queues are paused."""

from __future__ import annotations

from ._naming import PREFIX, app_tag, sharded


def workers() -> str:
    """Hash: worker name -> JSON {pid, apps, started_at}; written when a worker is ready to consume."""
    return f"{PREFIX}workers"


def workers_alive(shard: str = "") -> str:
    """Sorted set: worker name scored by its last liveness beat (ms); fresh beats mean the worker is alive.
    ``shard``: '' on one node; on a Cluster one of a fixed few (``worker.fleet.workers_alive``), picked by the worker's
    name, so the fleet's beats spread over the masters (see ``sharded``)."""
    return sharded("workers_alive", shard)


def run_backlog(app_name: str) -> str:
    """String with a TTL: set while a worker keeps the app's run queue paused (its jobs wait in the broker on
    purpose), so the reapers postpone rather than re-send the app's unclaimed jobs (``worker.queues.backlog``)."""
    return f"{PREFIX}{app_tag(app_name)}:run_backlog"


def app_catalog() -> str:
    """Hash: app name -> JSON {info, approval}: what an API needs to serve an app no ``--app`` named (its ADK
    AppInfo and the approval rules its tools declare), written by each worker serving it when it announces
    itself (``worker.fleet.app_catalog``)."""
    return f"{PREFIX}app_catalog"
