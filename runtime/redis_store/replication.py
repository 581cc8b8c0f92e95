"""Waiting for replicas: with ``AGENTQ_REDIS_MIN_REPLICAS`` set, a write is acknowledged only once that many
replicas have it (Redis ``WAIT``), so a failover to one of them cannot lose it.

Without it, Redis replication is asynchronous: a write acknowledged by the master a moment before it dies may
not have reached the replica that Sentinel (or the Cluster) promotes, and is lost. ``WAIT`` counts replicas that
have everything up to the last write of the connection it runs on:

- one node or Sentinel: the mux connection that made the write, so ``WAIT`` goes through it;
- Redis Cluster: each master replicates on its own, and a write and a later ``WAIT`` need not share a
  connection (redis-py pools them per node). The wait goes to the master that took the write (the master of the
  written key's slot): on one of its connections it writes a short-lived mark in that slot
  (``keys.replication_mark``) and then sends ``WAIT``, back to back. A master's replication stream is ordered,
  so a replica that has the mark has every write that master took before it. With the ``ClusterMux`` that is
  its node's one pipelined connection (``ClusterMux.send_together``); with redis-py's client, one of its pool.
"""

from __future__ import annotations

import functools
import os

from redis.exceptions import AskError, MovedError, ResponseError
from redis.exceptions import TimeoutError as RedisTimeoutError

from ..errors import UsageError
from . import keys
from .cluster_mux import ClusterMux

MIN_REPLICAS_ENV = "AGENTQ_REDIS_MIN_REPLICAS"
REPLICA_TIMEOUT_MS = 2000
"""How long a write waits for its replicas before it counts as failed (and is retried: the store is 'away')."""
MARK_TTL_MS = 60_000
"""The replication mark disappears by itself: it only has to outlive the ``WAIT`` sent right after it."""
_REDIRECTS = 3
"""How many MOVED/ASK answers one wait follows (a slot moving while the mark is written)."""


class NotReplicatedError(RedisTimeoutError):
    """Raised when a write was not acknowledged by ``AGENTQ_REDIS_MIN_REPLICAS`` replicas in time (retryable)."""


@functools.cache
def min_replicas() -> int:
    """``AGENTQ_REDIS_MIN_REPLICAS`` (0, the default: do not wait). Raises UsageError naming a bad value."""
    raw = os.environ.get(MIN_REPLICAS_ENV, "").strip() or "0"
    if not raw.isdigit():
        raise UsageError(f"{MIN_REPLICAS_ENV}={raw!r} is not a whole number of replicas")
    return int(raw)


async def wait_for_replicas(connection, what: str, *, key: str | None = None) -> None:
    """WAIT until the write is on enough replicas, when replicas are required; NotReplicatedError if too few.

    ``connection``: the one that wrote (one node, Sentinel) or the Cluster client; ``key``: a key the write
    touched, which names the master to wait on (required on a Cluster: UsageError without it)."""
    wanted = min_replicas()
    if not wanted:
        return
    if isinstance(connection, ClusterMux) or _is_cluster_client(connection):
        if key is None:
            raise UsageError(f"{what}: waiting for replicas on Redis Cluster needs the written key "
                             "(it names the master that took the write)")
        if isinstance(connection, ClusterMux):
            acked = await _wait_through_cluster_mux(connection, key, wanted)
        else:
            acked = await _wait_on_master_of(connection, key, wanted)
    else:
        acked = await connection.execute_command("WAIT", wanted, REPLICA_TIMEOUT_MS)
    if int(acked) < wanted:
        raise NotReplicatedError(f"{what}: {acked} of {wanted} replicas acknowledged it within "
                                 f"{REPLICA_TIMEOUT_MS} ms ({MIN_REPLICAS_ENV})")


def _is_cluster_client(connection) -> bool:
    from redis.asyncio.cluster import RedisCluster

    return isinstance(connection, RedisCluster)


async def _wait_through_cluster_mux(cluster: ClusterMux, key: str, wanted: int) -> int:
    """The mark, then WAIT, back to back on the mux connection of the master of ``key``'s slot."""
    mark = keys.replication_mark(key)
    marked, acked = await cluster.send_together(mark, [("SET", mark, "1", "PX", MARK_TTL_MS),
                                                       ("WAIT", wanted, REPLICA_TIMEOUT_MS)])
    if str(marked).startswith(("MOVED ", "ASK ")):
        raise NotReplicatedError(f"the slot of {key!r} kept moving while its replicas were waited for")
    for reply in (marked, acked):
        if isinstance(reply, BaseException):
            raise reply
    return acked


async def _wait_on_master_of(cluster, key: str, wanted: int) -> int:
    """The mark, then WAIT, on one connection of the master of ``key``'s slot (following a moved slot)."""
    mark = keys.replication_mark(key)
    node, asking = cluster.get_node_from_key(mark), False
    for _ in range(_REDIRECTS):
        commands = [("SET", mark, "1", "PX", MARK_TTL_MS), ("WAIT", wanted, REPLICA_TIMEOUT_MS)]
        if asking:  # the slot is moving to this node and the mark is new: it is written here
            commands.insert(0, ("ASKING",))
        replies = await _send_on_one_connection(node, commands)
        marked, acked = replies[-2], replies[-1]
        if not isinstance(marked, AskError):  # MovedError is an AskError too
            if isinstance(marked, Exception):
                raise marked
            if isinstance(acked, Exception):
                raise acked
            return acked
        if isinstance(marked, MovedError):
            await cluster.pttl(mark)  # through the client, which learns the slot's new master from the MOVED
            node, asking = cluster.get_node_from_key(mark), False
        else:
            node, asking = cluster.get_node(host=marked.host, port=marked.port), True
        if node is None:
            break
    raise NotReplicatedError(f"the slot of {key!r} kept moving while its replicas were waited for")


async def _send_on_one_connection(node, commands: list[tuple]) -> list:
    """Send ``commands`` back to back on one connection of ``node``; each reply, or the error it was."""
    connection = node.acquire_connection()
    try:
        await connection.send_packed_command(connection.pack_commands(commands))
        replies = []
        for _ in commands:
            try:
                replies.append(await connection.read_response())
            except ResponseError as exc:  # a reply that is an error (MOVED, ASK, ...): the next one still comes
                replies.append(exc)
        return replies
    except BaseException:
        await connection.disconnect()  # replies may be left unread: the connection must not be reused as is
        raise
    finally:
        node.release(connection)
