"""Which Redis errors mean "the store is away for now" (try again later) rather than a bug or bad data.

A dropped connection (``CLIENT KILL``, a restart, a failover), a server still loading its AOF, a master that was
demoted to a replica under us: each passes once Redis (or the new master) answers again, so workers hand work
back instead of failing it and the API answers 503 with ``Retry-After``.
"""

from __future__ import annotations

import random

from redis import exceptions as redis_errors

_TRANSIENT_REPLIES = ("LOADING", "READONLY", "MASTERDOWN", "TRYAGAIN", "CLUSTERDOWN")
"""Error replies of a server that is starting, was demoted, or lost its master (the mux connection's hiredis
reader reports them as plain ResponseError). On Redis Cluster: a slot being moved (TRYAGAIN) or a cluster that
has not yet promoted a dead master's replica (CLUSTERDOWN)."""

_CLUSTER_IN_FLUX = (redis_errors.ClusterError, redis_errors.SlotNotCoveredError)
"""A Cluster client's own verdicts while a master is down and not yet replaced: redirects exhausted, a slot with
no master known. Both pass once the cluster has promoted a replica."""


_CLOSED_TRANSPORT = "the handler is closed"
"""uvloop's words when a command is written to a connection whose peer went away (a master killed mid-write):
it raises RuntimeError, not OSError, and redis-py passes it through as it is."""


def is_store_unavailable(exc: BaseException) -> bool:
    """True for a lost or refused connection, a timeout, or a server that cannot take the command just now."""
    if isinstance(exc, RuntimeError) and _CLOSED_TRANSPORT in str(exc):
        return True
    if isinstance(exc, redis_errors.AuthenticationError | redis_errors.AuthorizationError):
        return False  # a configuration mistake: retrying will not fix it
    if isinstance(exc, redis_errors.ConnectionError | redis_errors.TimeoutError | redis_errors.ReadOnlyError):
        return True
    if isinstance(exc, _CLUSTER_IN_FLUX):
        return True
    if isinstance(exc, redis_errors.ResponseError):
        return str(exc).startswith(_TRANSIENT_REPLIES)
    return False


class Backoff:
    """Delays between attempts: doubling from ``base_s`` up to ``cap_s``, each drawn in [half, whole] so that many
    workers reconnecting after one outage do not all knock at once."""

    def __init__(self, base_s: float = 0.05, cap_s: float = 2.0):
        self.base_s = base_s
        self.cap_s = cap_s
        self.failures = 0

    def next_delay(self) -> float:
        """The delay before the next attempt (call once per failed attempt)."""
        bound = min(self.cap_s, self.base_s * 2 ** min(self.failures, 30))
        self.failures += 1
        return random.uniform(bound / 2, bound)

    def reset(self) -> None:
        """Start from ``base_s`` again (after a success)."""
        self.failures = 0
