"""The parked inbox across users and apps: pages, newest first, of every (app, user) pair a reader may see.

Each (app, user) has its own parked index (``keys.user_parked``, kept by the status scripts). One script merges
them on the server (a k-way merge: each index's newest entry after the cursor, its next one only when that
one is taken) into the newest ``page_size + 1`` and counts the total; a second round trip reads the page's
records. The order is the one of ``worker.records.listing`` (creation time, then id, both descending), so the cursor
(time, id) is exact across pairs: an invocation parked throughout is listed exactly once, whatever parks or
resumes meanwhile.

Cost: one round trip and O((pairs + page size) * log n) server work, flat in the number of parked invocations;
it grows with the number of (app, user) pairs looked at, which a filter by app and user narrows to one. A reader
who may see every user of an app reads the app-wide index instead (``app_wide_page``: ``keys.app_parked``, kept
by the same scripts, members ``[user, id]`` scored by creation time in ms), flat in the number of users too; its
page tokens are of their own kind, so a token of one listing is refused by the other.

On Redis Cluster a script may only read one hash slot, so the pairs are grouped by the slot of their index:
each group's script gives its newest ``page_size + 1`` after the cursor, and the newest of those make the page
(one script call per slot in use, sent at once). On one node there is one group: one script, as before.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from typing import Any

from redis.asyncio import RedisCluster
from redis.crc import key_slot

from runtime.errors import UsageError
from runtime.redis_store import keys
from runtime.redis_store.codec import text
from runtime.redis_store.scripts import PARKED_FINGERPRINT, PARKED_PAGE
from worker.config.shards import app_users, in_use
from worker.records.codec import decode_record
from worker.records.listing import Page, check_page_size, decode_token, encode_token
from worker.records.record import InvocationRecord

Pair = tuple[str, str]
"""(app, user)."""


async def user_pairs(redis: Any, apps: list[str], users: list[str] | None) -> list[Pair]:
    """(app, user) pairs of ``users`` in each of ``apps``; ``users`` None: every user with a session there."""
    if users is not None:
        return [(app, user) for app in apps for user in users]
    members = await app_users(redis, apps)  # merged over the shards on a Cluster
    return [(app, user) for app, found in zip(apps, members, strict=True) for user in sorted(found)]


async def parked_page(redis: Any, pairs: list[Pair], *, page_size: int = 25,
                      page_token: str | None = None) -> tuple[Page[InvocationRecord], int]:
    """A page of the parked invocations of ``pairs``, newest first, and how many are parked in all."""
    check_page_size(page_size)
    indexes = [keys.user_parked(app, user) for app, user in pairs]
    total, found = await _merge(redis, indexes, _cursor(page_token, "p"), page_size + 1)
    located = [((*pairs[n], member), score, member) for n, member, score in found]
    return await _page(redis, located, page_size, "p"), total


async def app_wide_page(redis: Any, apps: list[str], *, cluster: bool, page_size: int = 25,
                        page_token: str | None = None) -> tuple[Page[InvocationRecord], int]:
    """A page of every parked invocation of ``apps``, all users, newest first, and how many are parked in all.

    Reads the app-wide parked index (``keys.app_parked``, one per shard on a Cluster), so its cost does not
    grow with the number of users, as ``parked_page`` over every user's pair would."""
    check_page_size(page_size)
    shards = await in_use(redis, cluster=cluster)
    where = [(app, shard) for app in apps for shard in shards]
    indexes = [keys.app_parked(app, shard) for app, shard in where]
    total, found = await _merge(redis, indexes, _cursor(page_token, "a"), page_size + 1)
    located = []
    for n, member, score in found:
        user, invocation_id = json.loads(member)
        located.append(((where[n][0], user, invocation_id), score, member))
    return await _page(redis, located, page_size, "a"), total


async def app_wide_total(store: Any, apps: list[str]) -> int:
    """How many invocations of ``apps`` are parked, all users (the app-wide index's sizes)."""
    shards = await in_use(store.redis, cluster=store.clients.is_cluster)
    return await _sizes(store, [keys.app_parked(app, shard) for app in apps for shard in shards])


async def parked_total(store: Any, pairs: list[Pair]) -> int:
    """How many invocations of ``pairs`` are parked."""
    return await _sizes(store, [keys.user_parked(app, user) for app, user in pairs])


async def _sizes(store: Any, indexes: list[str]) -> int:
    # On the store's pipelined connection: many pages opening at once add no connections to Redis, which
    # would cost the server time for as long as they stay open.
    sizes = await store.batch(*(("ZCARD", index) for index in indexes)) if indexes else []
    for size in sizes:
        if isinstance(size, Exception):
            raise size
    return sum(int(size) for size in sizes)


async def _merge(redis: Any, indexes: list[str], cursor: tuple[str, str],
                 count: int) -> tuple[int, list[tuple[int, str, float]]]:
    """The indexes' total size and their newest ``count`` entries after ``cursor``, newest first, each as
    (position in ``indexes``, member, score)."""
    top, last = cursor
    groups = _slot_groups(redis, indexes)
    replies = await asyncio.gather(*(
        PARKED_PAGE(redis, parked_indexes=[indexes[n] for n in group], top=top, last_id=last, count=count)
        for group in groups))
    total, found = 0, []
    for group, reply in zip(groups, replies, strict=True):
        total, flat = total + int(reply[0]), reply[1:]
        found += [(group[int(flat[i]) - 1], text(flat[i + 1]), float(flat[i + 2])) for i in range(0, len(flat), 3)]
    if len(groups) > 1:  # each group's entries come newest first; the page is the newest of them all
        found.sort(key=lambda entry: (entry[2], entry[1]), reverse=True)
    return total, found[:count]


async def _page(redis: Any, located: list[tuple[tuple[str, str, str], float, str]], page_size: int,
                kind: str) -> Page[InvocationRecord]:
    """The records of the first ``page_size`` of ``located`` ((app, user, id), score, member) still parked, and
    a token after the last of them when there are more."""
    page, more = located[:page_size], len(located) > page_size
    pipe = redis.pipeline(transaction=False)
    for (app, user, invocation_id), _, _ in page:
        pipe.hgetall(keys.invocation(app, user, invocation_id))
    records = []
    for fields in await pipe.execute() if page else []:
        record = decode_record({text(k): text(v) for k, v in fields.items()}) if fields else None
        if record is not None and record.status == "parked":  # else resumed or gone since the index was read
            records.append(record)
    token = encode_token(kind, page[-1][1], page[-1][2]) if more else None
    return Page(items=records, next_page_token=token)


async def fingerprint(redis: Any, pairs: list[Pair]) -> tuple[int, str]:
    """The parked total and a digest that changes when an invocation of ``pairs`` parks or leaves the inbox."""
    indexes = [keys.user_parked(app, user) for app, user in pairs]
    groups = _slot_groups(redis, indexes)
    replies = await asyncio.gather(*(
        PARKED_FINGERPRINT(redis, parked_indexes=[indexes[n] for n in group]) for group in groups))
    if len(groups) == 1:
        total, digest = replies[0]
        return int(total), text(digest)
    combined = hashlib.sha1(" ".join(text(digest) for _, digest in replies).encode()).hexdigest()
    return sum(int(total) for total, _ in replies), combined


def _slot_groups(redis: Any, indexes: list[str]) -> list[list[int]]:
    """Positions in ``indexes`` grouped so each group's keys share a hash slot (one group on one node)."""
    if not isinstance(redis, RedisCluster):
        return [list(range(len(indexes)))]
    groups: dict[int, list[int]] = {}
    for n, index in enumerate(indexes):
        groups.setdefault(key_slot(index.encode()), []).append(n)
    return list(groups.values()) or [[]]


def _cursor(page_token: str | None, kind: str) -> tuple[str, str]:
    """The (score, member) a page token holds, as the merge script takes them (from the start: no token);
    UsageError for a made-up token."""
    if not page_token:
        return "+inf", ""
    position = decode_token(page_token, kind)
    try:
        score, last_id = position
        return repr(float(score)), str(last_id)
    except (TypeError, ValueError):
        raise UsageError(f"page token {page_token[:80]!r} is not one this listing handed out") from None
