"""Which shards have a webhook delivery due: on Redis Cluster a deliverer's pass visits only those, so an idle
pass costs a fixed few commands, not one claim per shard in use (one node has one shard, '', whose claim is
already one command, and none of this applies).

It works as the reaper's due shards do (``worker.config.due_shards``, with the same claim and settle scripts),
over its own index, ``keys.webhook_due_shards(copy)``: each shard tag scored by a lower bound of its earliest
``webhook_due`` entry, in ``COPIES`` copies picked by the tag.

- Whoever makes a delivery due marks its shard (``ZADD LT``) after the script that did: a transition that
  queues a notification (a settle or park of an invocation with a webhook, a cancel, an expired call), a
  failed attempt's retry, a redelivery from the dead letters. A mark is a hint: a shard marked with nothing due
  costs one visit, which drops it from the index.
- A pass claims the due shards (``lua/due/claim.lua`` pushes their score ``CLAIM_S`` ahead), claims and sends
  their due deliveries, then scores each shard by its earliest entry read after the sends
  (``lua/due/settle.lua`` keeps a writer's lower mark). A delivery held by a claim is due again when its hold
  runs out, and that is its entry's score: a deliverer that died mid-send leaves its shard claimed until
  ``CLAIM_S``, or the next re-seed, whichever comes first.
- ``reseed`` covers a mark that never arrived (a writer that died between its script and its mark, a mark
  lost with a master, entries written by an older release): every ``RESEED_S`` one worker scores every shard in
  use by its earliest entry. The delivery itself is the outbox's business, unchanged: exactly one worker holds
  it at a time, and it stays until delivered or dead, so the index can only make it wait, never drop it.
"""

from __future__ import annotations

import asyncio
import time
import zlib

from runtime.redis_store import keys
from runtime.redis_store.scripts import DUE_CLAIM, DUE_SETTLE
from worker.config.due_shards import CLAIM_LIMIT, CLAIM_S
from worker.config.shards import in_use

COPIES = 4
"""Copies of the index on a Cluster: an idle pass reads every one, and marks are rare (only deliveries), so a
few suffice to spread them over the masters."""
_RESEED_CHUNK = 250
"""Shards read per round trip of a re-seed."""


def copy_of(shard: str) -> str:
    """The copy of the index that scores ``shard`` (stable for a tag)."""
    return f"w:{zlib.crc32(shard.encode()) % COPIES}"


def mark(shard: str, due_ms: int) -> tuple:
    """The command that lowers ``shard``'s score to ``due_ms`` (or adds it); send it after the delivery's script."""
    return ("ZADD", keys.webhook_due_shards(copy_of(shard)), "LT", due_ms, shard)


def marks(shard: str, due_ms: float | int) -> list[tuple]:
    """``mark`` on a Cluster shard; nothing on one node (shard '')."""
    return [mark(shard, int(due_ms))] if shard else []


def now_ms() -> int:
    """Now, in the index's unit."""
    return int(time.time() * 1000)


async def claim(mux, now: int) -> tuple[list[str], int]:
    """The shards with a delivery due at ``now`` (ms) that this process claimed first, and the claim's score."""
    until_ms = now + int(CLAIM_S * 1000)
    replies = await asyncio.gather(*(
        DUE_CLAIM(mux, index=keys.webhook_due_shards(f"w:{copy}"), now_ms=now, until_ms=until_ms,
                  limit=CLAIM_LIMIT) for copy in range(COPIES)))
    return [shard for reply in replies for shard in reply], until_ms


def _earliest(reply) -> int | None:
    if isinstance(reply, Exception):
        raise reply
    return int(float(reply[1])) if reply else None


async def settle(mux, shard: str, claimed_ms: int) -> None:
    """Score a claimed shard by its earliest delivery, read now (after the pass's sends)."""
    due = _earliest(await mux.execute_command("ZRANGE", keys.webhook_due(shard), 0, 0, "WITHSCORES"))
    await DUE_SETTLE(mux, index=keys.webhook_due_shards(copy_of(shard)), shard=shard, claimed_ms=claimed_ms,
                     earliest_ms="" if due is None else due)


async def reseed(store) -> int:
    """Score every shard in use by its earliest delivery (``ZADD LT``: a claim or a writer's mark stays when
    lower); the number of shards scored."""
    shards = await in_use(store.redis, cluster=True)
    scored = 0
    for start in range(0, len(shards), _RESEED_CHUNK):
        chunk = shards[start : start + _RESEED_CHUNK]
        replies = await store.batch(*[("ZRANGE", keys.webhook_due(shard), 0, 0, "WITHSCORES") for shard in chunk])
        found = [mark(shard, due) for shard, reply in zip(chunk, replies, strict=True)
                 if (due := _earliest(reply)) is not None]
        for reply in await store.batch(*found):
            if isinstance(reply, Exception):
                raise reply
        scored += len(found)
    return scored
