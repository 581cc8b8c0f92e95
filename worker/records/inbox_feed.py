"""Reading the inbox's change feed: the streams the status scripts append to when an invocation parks or leaves
the inbox (``keys.inbox_changes``, one per shard: one stream on a single node).

A reader holds a ``FeedCursor`` (the last entry id it has seen of each shard's stream) and asks for what came
after it with one blocking read (``read_changes``), so a reader with nothing new costs Redis nothing until
something arrives. The streams are trimmed to about ``keys.INBOX_CHANGES_MAXLEN`` entries; a reader that fell
further behind than that cannot know what it missed, and is told so (``ChangeBatch.behind``) to reload.

On a Cluster each shard's stream lives in its own hash slot, and one XREAD may only name keys of one slot, so
the shards are read with one blocking read each, at once, until the first answers: a reader holds one Redis
connection per shard in use while it waits (a known cost on a Cluster with many shards).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

from redis.asyncio import RedisCluster

from runtime.redis_store import keys
from worker.config.shards import in_use

READ_COUNT = 500
"""Most entries taken from one shard's stream per read. At most ``keys.INBOX_CHANGES_MAXLEN``: a reader can then
only have lost entries to the trim when a read comes back full, so only a full read needs a second look."""


@dataclass(frozen=True, kw_only=True)
class InboxChangeEntry:
    """One change of what an approver sees: invocation ``invocation_id`` of ``user`` in ``app`` was ``change``
    (``parked``, ``answered``, ``expired``, ``cancelled``, ``settled``)."""

    id: str
    app: str
    user: str
    invocation_id: str
    change: str


@dataclass(kw_only=True)
class FeedCursor:
    """The newest entry id read from each shard's stream (``'0-0'``: from its start)."""

    positions: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True, kw_only=True)
class ChangeBatch:
    """What a read found: the changes, oldest first, and whether some may have been trimmed away unread."""

    changes: list[InboxChangeEntry]
    behind: bool = False


async def feed_cursor(redis: Any, *, cluster: bool) -> FeedCursor:
    """A cursor at the newest entry of every shard's stream: reading from it gives only later changes."""
    shards = await in_use(redis, cluster=cluster)
    newest = await asyncio.gather(*(redis.xrevrange(keys.inbox_changes(shard), count=1) for shard in shards))
    return FeedCursor(positions={shard: entries[0][0] if entries else "0-0"
                                 for shard, entries in zip(shards, newest, strict=True)})


async def add_new_shards(redis: Any, cursor: FeedCursor, *, cluster: bool) -> None:
    """Follow shards registered since the cursor was made, from their start (a new shard's first changes are
    new to everyone). Nothing to do on one node."""
    if cluster:
        for shard in await in_use(redis, cluster=True):
            cursor.positions.setdefault(shard, "0-0")


async def read_changes(redis: Any, cursor: FeedCursor, *, block_ms: int) -> ChangeBatch:
    """The changes after ``cursor`` (which moves past them), waiting up to ``block_ms`` for the first."""
    if isinstance(redis, RedisCluster):
        reply = await _read_shards(redis, cursor, block_ms)
    else:
        streams = {keys.inbox_changes(shard): position for shard, position in cursor.positions.items()}
        reply = await redis.xread(streams, count=READ_COUNT, block=block_ms) or []
    shard_of = {keys.inbox_changes(shard): shard for shard in cursor.positions}
    changes, full = [], []
    for stream, entries in reply:
        shard = shard_of[stream]
        before = cursor.positions[shard]
        if len(entries) == READ_COUNT:
            full.append((shard, before))
        cursor.positions[shard] = entries[-1][0]
        changes += [_entry(entry_id, fields) for entry_id, fields in entries]
    # Only a reader that took a full batch can have fallen past the trim: look whether the oldest entry kept
    # is now newer than where it stood (then entries between may be gone).
    behind = False
    for shard, before in full:
        oldest = await redis.xrange(keys.inbox_changes(shard), count=1)
        behind |= bool(oldest) and _newer(oldest[0][0], before)
    if len(cursor.positions) > 1:
        changes.sort(key=lambda change: _id_key(change.id))
    return ChangeBatch(changes=changes, behind=behind)


async def _read_shards(redis: Any, cursor: FeedCursor, block_ms: int) -> list:
    """On a Cluster: one blocking read per shard, at once; the first to answer ends the wait. The others are
    abandoned (nothing is lost: a read takes nothing off a stream, and their cursors have not moved)."""
    reads = [asyncio.create_task(redis.xread({keys.inbox_changes(shard): position}, count=READ_COUNT,
                                             block=block_ms))
             for shard, position in cursor.positions.items()]
    done, pending = await asyncio.wait(reads, return_when=asyncio.FIRST_COMPLETED)
    for read in pending:
        read.cancel()
    await asyncio.gather(*pending, return_exceptions=True)
    return [stream for read in done for stream in read.result() or []]


async def check_cursor(redis: Any, cursor: FeedCursor) -> bool:
    """After losing the connection: True when a stream's newest entry is older than the cursor (Redis lost
    data it had, e.g. restarted without its AOF), in which case the cursor moves back to it; a reader then
    reloads, since what it saw may no longer be so."""
    moved = False
    for shard, position in cursor.positions.items():
        newest = await redis.xrevrange(keys.inbox_changes(shard), count=1)
        last = newest[0][0] if newest else "0-0"
        if _newer(position, last):
            cursor.positions[shard] = last
            moved = True
    return moved


def _entry(entry_id: str, fields: dict[str, str]) -> InboxChangeEntry:
    return InboxChangeEntry(id=entry_id, app=fields.get("app", ""), user=fields.get("user", ""),
                            invocation_id=fields.get("inv", ""), change=fields.get("change", ""))


def _id_key(entry_id: str) -> tuple[int, int]:
    ms, seq = entry_id.split("-", 1)
    return int(ms), int(seq)


def _newer(a: str, b: str) -> bool:
    return _id_key(a) > _id_key(b)


__all__ = ["ChangeBatch", "FeedCursor", "InboxChangeEntry", "add_new_shards", "check_cursor",
           "feed_cursor", "read_changes"]
