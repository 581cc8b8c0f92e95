"""Waiting for replicas: with ``AGENTQ_REDIS_MIN_REPLICAS`` set, a write is acknowledged only once that many
replicas have it (Redis ``WAIT``), so a failover to one of them cannot lose it.

Without it, Redis replication is asynchronous: a write acknowledged by the master a moment before it dies may
not have reached the replica that Sentinel promotes, and is lost. ``WAIT`` runs on the connection that made the
write (it covers every write sent on it before), so it goes through the same mux connection.
"""

from __future__ import annotations

import functools
import os

from redis.exceptions import TimeoutError as RedisTimeoutError

from ..errors import UsageError

MIN_REPLICAS_ENV = "AGENTQ_REDIS_MIN_REPLICAS"
REPLICA_TIMEOUT_MS = 2000
"""How long a write waits for its replicas before it counts as failed (and is retried: the store is 'away')."""


class NotReplicatedError(RedisTimeoutError):
    """Raised when a write was not acknowledged by ``AGENTQ_REDIS_MIN_REPLICAS`` replicas in time (retryable)."""


@functools.cache
def min_replicas() -> int:
    """``AGENTQ_REDIS_MIN_REPLICAS`` (0, the default: do not wait). Raises UsageError naming a bad value."""
    raw = os.environ.get(MIN_REPLICAS_ENV, "").strip() or "0"
    if not raw.isdigit():
        raise UsageError(f"{MIN_REPLICAS_ENV}={raw!r} is not a whole number of replicas")
    return int(raw)


async def wait_for_replicas(connection, what: str) -> None:
    """WAIT on ``connection`` (the one that wrote) when replicas are required; NotReplicatedError if too few."""
    wanted = min_replicas()
    if not wanted:
        return
    acked = await connection.execute_command("WAIT", wanted, REPLICA_TIMEOUT_MS)
    if int(acked) < wanted:
        raise NotReplicatedError(f"{what}: {acked} of {wanted} replicas acknowledged it within "
                                 f"{REPLICA_TIMEOUT_MS} ms ({MIN_REPLICAS_ENV})")
