"""Which shards are due: on Redis Cluster the reaper reads only those, so a pass costs what is due, not the
number of shards in use (one node has one shard, '', and none of this applies).

``keys.due_shards(copy)`` scores each shard tag by a lower bound of the earliest entry of its reaper and
sweeper sets (``lease_expiries``, ``dispatch_due``, ``call_deadlines``, ``retention_due``,
``session_expiries``). It has ``COPIES`` copies, picked by the shard's tag, so the writers spread over the
masters and a pass reads a fixed few keys.

- Writers that add an entry due soon (an enqueue's dispatch watchdog, a re-sent job's, a resumed one's, a new
  session's idle expiry, a parked call's deadline) add ``ZADD LT`` of its time after the entry.
- A pass claims the due shards (``lua/due/claim.lua`` pushes their score ``CLAIM_S`` ahead), reaps them, reads
  each one's earliest entry and settles its score to it (``lua/due/settle.lua`` keeps a writer's lower score).
- Entries no writer marks are read by the next pass over their shard, which comes soon enough: a lease's entry
  is added while the invocation's dispatch entry, due no later, is still there (a heartbeat only pushes it
  back); a parked call's deadline is marked by ``worker.fleet.lease.add_pending`` after it writes it (unmarked,
  a deadline shorter than the lease TTL waited for the lease entry's score); the retention entries a sweeper
  pushes back are added during the pass that settles the shard after.
- ``reseed`` covers the rest (an entry whose mark was lost with a master, a claimer that died): every
  ``RESEED_S`` one worker scores every shard in use by its earliest entry (``ZADD LT``). Since ``CLAIM_S`` is
  longer than ``RESEED_S``, a mark that a settle overwrote (the entry written between the settle's read and
  its write, due after the claim's end) is restored by a re-seed before it is due.
"""

from __future__ import annotations

import asyncio
import time
import zlib
from collections.abc import Awaitable, Callable
from typing import Any

from runtime.redis_store import keys
from runtime.redis_store.scripts import DUE_CLAIM, DUE_SETTLE
from worker.config.shards import in_use

COPIES = 16
"""Copies of the index on a Cluster (a fixed few: a pass reads every one)."""
CLAIM_S = 60.0
"""How long a claimed shard is left to its claimer (a claimer that died is followed by the next re-seed)."""
RESEED_S = 30.0
"""How often one worker scores every shard in use afresh; shorter than CLAIM_S (see above)."""
CLAIM_LIMIT = 100
"""Shards one pass claims from each copy at most (the rest are claimed by the next pass)."""
_PROBES = 5
"""Sets read for a shard's earliest entry (``_earliest_probes``)."""
_RESEED_CHUNK = 250
"""Shards read per round trip of a re-seed."""


def copy_of(shard: str) -> str:
    """The copy of the index that scores ``shard`` (stable for a tag)."""
    return f"d:{zlib.crc32(shard.encode()) % COPIES}"


def mark(shard: str, due_ms: int) -> tuple:
    """The command that lowers ``shard``'s score to ``due_ms`` (or adds it); send it after the entry it marks."""
    return ("ZADD", keys.due_shards(copy_of(shard)), "LT", due_ms, shard)


def _earliest_probes(shard: str) -> list[tuple]:
    return [("ZRANGE", key, 0, 0, "WITHSCORES") for key in (
        keys.lease_expiries(shard), keys.dispatch_due(shard), keys.call_deadlines(shard), keys.retention_due(shard),
        keys.session_expiries(shard))]


def _earliest(replies: list) -> int | None:
    """The earliest due time (ms) from the probes' replies; None when the sets are empty."""
    for reply in replies:
        if isinstance(reply, Exception):
            raise reply
    scores = [float(reply[1]) * (1000 if n == 2 else 1) for n, reply in enumerate(replies) if reply]
    return int(min(scores)) if scores else None  # call deadlines are in seconds, the others in ms


async def earliest(store, shard: str) -> int | None:
    """The earliest due time (ms) of anything in ``shard``'s reaper and retention sets (one round trip)."""
    return _earliest(await store.batch(*_earliest_probes(shard)))


async def claim(store, now_ms: int) -> tuple[list[str], int]:
    """The shards due at ``now_ms`` that this process claimed first, and the score the claim gave them."""
    until_ms = now_ms + int(CLAIM_S * 1000)
    replies = await asyncio.gather(*(  # one script per copy (each may live on another master), pipelined
        DUE_CLAIM(store.mux, index=keys.due_shards(f"d:{copy}"), now_ms=now_ms, until_ms=until_ms,
                  limit=CLAIM_LIMIT) for copy in range(COPIES)))
    return [shard for reply in replies for shard in reply], until_ms


async def settle(store, shard: str, claimed_ms: int) -> None:
    """Score a claimed shard by its earliest entry, read now (after the pass over it)."""
    due_ms = await earliest(store, shard)
    await DUE_SETTLE(store.mux, index=keys.due_shards(copy_of(shard)), shard=shard, claimed_ms=claimed_ms,
                     earliest_ms="" if due_ms is None else due_ms)


class Reseeder:
    """Re-seeds an index every ``RESEED_S`` when this process wins the turn (one SET NX per period on
    ``turn_key``). The reaper's due shards use the defaults; the webhook deliverer's index passes its own turn
    key and re-seed (worker.webhooks.due)."""

    def __init__(self, turn_key: Callable[[], str] | None = None,
                 reseed_all: Callable[[Any], Awaitable[int]] | None = None) -> None:
        self._next = 0.0
        self._turn_key = turn_key or keys.due_shards_reseed
        self._reseed_all = reseed_all or reseed

    async def maybe_reseed(self, store) -> int:
        """Shards scored by this call (0 when it was not this process's turn)."""
        now = time.monotonic()
        if now < self._next:
            return 0
        self._next = now + RESEED_S
        if not await store.mux.execute_command("SET", self._turn_key(), "1", "NX", "PX", int(RESEED_S * 1000)):
            return 0
        return await self._reseed_all(store)


async def reseed(store) -> int:
    """Score every shard in use by its earliest entry (``ZADD LT``: a claim or a writer's mark stays when lower);
    the number of shards scored."""
    shards = await in_use(store.redis, cluster=True)
    scored = 0
    for start in range(0, len(shards), _RESEED_CHUNK):
        chunk = shards[start : start + _RESEED_CHUNK]
        replies = await store.batch(*[probe for shard in chunk for probe in _earliest_probes(shard)])
        marks = []
        for n, shard in enumerate(chunk):
            due_ms = _earliest(replies[_PROBES * n : _PROBES * (n + 1)])
            if due_ms is not None:
                marks.append(mark(shard, due_ms))
        for reply in await store.batch(*marks):
            if isinstance(reply, Exception):
                raise reply
        scored += len(marks)
    return scored
