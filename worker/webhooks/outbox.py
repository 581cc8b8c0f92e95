"""The webhook outbox in Redis: notifications waiting to be delivered, their claims, and the dead-letter list.

The status scripts (``notify`` in ``runtime/redis_store/lua/lib/invocation_status.lua``) add a notification in
the same step as the transition it reports: a JSON entry in ``keys.webhook_outbox()`` and its id in ``keys.webhook_due()`` scored by when it is
next tried. Workers claim due ones (the claim pushes the score past the send, so no other worker sends it at the
same time; a worker that dies mid-send leaves it to be claimed again after ``hold_s``), then record the outcome:
delivered (gone), failed (tried again later) or dead (moved to the dead-letter list, newest ``DEAD_LIMIT`` kept).
Each script also counts its outcome in ``keys.webhook_stats()``, which ``/metrics`` reads.

On Redis Cluster each of those keys has one copy per shard (``worker.config.shards``): a notification lives in the shard
of its invocation's user from the status script that adds it to its delivery or dead letter, so every step is
one script in one slot. A deliverer's claims visit only the shards with a delivery due (``worker.webhooks.due``),
which a retry and a redelivery mark here; the readers (dead letters, counters) merge every shard in use.
"""

from __future__ import annotations

import json
import logging
import random
import time
from typing import Any

from runtime.redis_store import keys
from runtime.redis_store.codec import text
from runtime.redis_store.scripts import (
    WEBHOOK_CLAIM,
    WEBHOOK_DEAD,
    WEBHOOK_DELIVERED,
    WEBHOOK_REDELIVER,
    WEBHOOK_RETRY,
)
from worker.config.shards import in_use, is_cluster_client, shard_of
from worker.webhooks import due

log = logging.getLogger("agentq.webhooks")

DEAD_LIMIT = 10_000
"""Dead letters kept; older ones are dropped as new ones arrive."""


async def claim(redis: Any, *, limit: int, hold_s: float, now: float | None = None,
                shards: list[str] | None = None) -> list[dict]:
    """Up to ``limit`` due notifications, each held for ``hold_s`` seconds from now (oldest due first within a
    shard; on a Cluster the shards are walked in turn, from a random one, until ``limit`` are claimed).
    ``shards``: the ones to read (the deliverer passes those its due index claimed); default every one in use."""
    now_ms = _ms(time.time() if now is None else now)
    claimed: list[dict] = []
    shards = await _shards(redis) if shards is None else shards
    if not shards:
        return claimed
    start = random.randrange(len(shards))  # a random first shard: a busy one early in the list starves no other
    for shard in shards[start:] + shards[:start]:
        raw = await WEBHOOK_CLAIM(redis, due=keys.webhook_due(shard), outbox=keys.webhook_outbox(shard),
                                  now_ms=now_ms, hold_ms=_ms(hold_s), limit=limit - len(claimed))
        claimed += [entry for entry in map(_parsed, raw) if entry is not None]
        if len(claimed) >= limit:
            break
    return claimed


async def delivered(redis: Any, entry: dict) -> None:
    """The receiver accepted it: it leaves the outbox."""
    await WEBHOOK_DELIVERED(redis, **_outbox_keys(_shard_of(redis, entry)), id=entry["id"])


async def retry(redis: Any, entry: dict, *, at: float, error: str) -> None:
    """A failed attempt: try again at ``at`` (unix seconds), remembering the attempt count and the error."""
    entry = {**entry, "attempts": entry.get("attempts", 0) + 1, "last_error": error}
    shard = _shard_of(redis, entry)
    kept = await WEBHOOK_RETRY(redis, **_outbox_keys(shard), id=entry["id"], entry_json=json.dumps(entry),
                               next_ms=_ms(at))
    if kept:  # on a Cluster: its shard is visited again when the retry is due
        await _mark(redis, shard, _ms(at))


async def dead(redis: Any, entry: dict, *, error: str, now: float | None = None) -> None:
    """A failed last attempt: the notification moves to the dead-letter list (of its shard)."""
    now = time.time() if now is None else now
    member = f"{_ms(now):015d}:{entry['id']}"
    entry = {**entry, "attempts": entry.get("attempts", 0) + 1, "last_error": error, "dead_at": now,
             "member": member}
    shard = _shard_of(redis, entry)
    await WEBHOOK_DEAD(redis, **_outbox_keys(shard), dead=keys.webhook_dead(shard),
                       dead_entries=keys.webhook_dead_entries(shard), id=entry["id"], entry_json=json.dumps(entry),
                       member=member, limit=DEAD_LIMIT)


async def dead_letters(redis: Any, *, limit: int, after: str | None = None) -> tuple[list[dict], str | None]:
    """Dead letters newest first, after the cursor ``after``; the page and the next cursor (None: no more).

    Members sort by the time they died everywhere, so on a Cluster the page is the newest ``limit`` of each
    shard's own page, merged; the cursor (the last member shown) works the same in every shard."""
    start = "+" if after is None else "(" + after
    shards = await _shards(redis)
    pipe = redis.pipeline(transaction=False)
    for shard in shards:
        pipe.zrevrangebylex(keys.webhook_dead(shard), start, "-", start=0, num=limit)
    by_shard = await pipe.execute()
    newest = sorted(((text(member), shard) for shard, members in zip(shards, by_shard, strict=True)
                     for member in members), reverse=True)[:limit]
    if not newest:
        return [], None
    pipe = redis.pipeline(transaction=False)
    for member, shard in newest:
        pipe.hget(keys.webhook_dead_entries(shard), member.partition(":")[2])
    raw = await pipe.execute()
    entries = [json.loads(text(item)) for item in raw if item is not None]
    return entries, newest[-1][0] if len(newest) == limit else None


async def dead_letter(redis: Any, delivery_id: str) -> dict | None:
    """One dead letter by its delivery id (None: not in the list; on a Cluster every shard is asked)."""
    pipe = redis.pipeline(transaction=False)
    for shard in await _shards(redis):
        pipe.hget(keys.webhook_dead_entries(shard), delivery_id)
    found = next((item for item in await pipe.execute() if item is not None), None)
    return None if found is None else json.loads(text(found))


async def redeliver(redis: Any, entry: dict, *, now: float | None = None, actor: dict | None = None) -> bool:
    """Put a dead letter back in the outbox with a fresh retry window (same delivery id); False if it is gone.

    ``actor`` is recorded on the invocation's record (and the app's audit index) in the same script call."""
    from worker.records import audit

    now = time.time() if now is None else now
    fresh = {name: value for name, value in entry.items() if name not in ("member", "dead_at")}
    fresh.update(attempts=0, at=repr(now))
    record = audit.entry("redeliver", actor, _ms(now) / 1000, delivery_id=entry["id"])
    shard = _shard_of(redis, entry)
    script_audit = audit.script_args(record, entry["user"], entry["inv"])
    back = bool(await WEBHOOK_REDELIVER(
        redis, due=keys.webhook_due(shard), outbox=keys.webhook_outbox(shard), dead=keys.webhook_dead(shard),
        dead_entries=keys.webhook_dead_entries(shard),
        record=keys.invocation(entry["app"], entry["user"], entry["inv"]),
        app_audit=None if shard else keys.app_audit(entry["app"]), id=entry["id"], entry_json=json.dumps(fresh),
        member=entry["member"], now_ms=_ms(now), **script_audit))
    if back and shard and record is not None:  # the app's audit index is another slot: added after the script
        await redis.zadd(keys.app_audit(entry["app"]), {script_audit["audit_member"]: _ms(record.at)}, nx=True)
    if back:  # on a Cluster: its shard is visited by the next pass
        await _mark(redis, shard, _ms(now))
    return back


async def stats(redis: Any) -> dict[str, float]:
    """Counters (delivered, failed attempts, dead) and sizes (pending, dead_letters) for /metrics, summed over
    the shards on a Cluster."""
    shards = await _shards(redis)
    pipe = redis.pipeline(transaction=False)
    for shard in shards:
        pipe.hgetall(keys.webhook_stats(shard))
        pipe.zcard(keys.webhook_due(shard))
        pipe.zcard(keys.webhook_dead(shard))
    replies = await pipe.execute()
    totals = {"delivered": 0.0, "failed": 0.0, "dead": 0.0, "pending": 0.0, "dead_letters": 0.0}
    for counters, pending, dead_count in zip(replies[::3], replies[1::3], replies[2::3], strict=True):
        values = {text(name): float(value) for name, value in counters.items()}
        for name in ("delivered", "failed", "dead"):
            totals[name] += values.get(name, 0.0)
        totals["pending"] += float(pending)
        totals["dead_letters"] += float(dead_count)
    return totals


def _parsed(raw: Any) -> dict | None:
    """One claimed entry, None (logged) when it is not a JSON object: it fails alone, the rest of the claim is
    sent, and it is claimed again once its hold runs out (nothing is dropped without a person seeing it)."""
    try:
        entry = json.loads(text(raw))
    except ValueError as exc:
        entry = exc
    if isinstance(entry, dict) and isinstance(entry.get("id"), str):
        return entry
    log.error("webhook outbox: an entry this release cannot read is left in the outbox: %r", text(raw)[:300])
    return None


UNSENDABLE_FIELDS = {"event": "unknown", "session": "", "url": "", "at": "0", "inv": ""}
"""What an entry of an older or unexpected shape is given when it goes to the dead letters, so that they (and
``GET /webhooks/dead-letters``) can still show it."""


async def unsendable(redis: Any, entry: dict, *, error: str, now: float | None = None) -> bool:
    """An entry whose notification cannot be built (a field missing or of another shape than this release
    writes): to the dead letters at once, its missing fields filled in (``UNSENDABLE_FIELDS``). False when it
    names no app and user (no shard to place it in): it stays in the outbox, claimed again once its hold runs out."""
    if not isinstance(entry.get("app"), str) or not isinstance(entry.get("user"), str):
        return False
    filled = {**UNSENDABLE_FIELDS, **{name: value for name, value in entry.items() if value is not None}}
    if not isinstance(filled.get("attempts"), int):
        filled["attempts"] = 0
    await dead(redis, filled, error=error, now=now)
    return True


def _ms(seconds: float) -> int:
    return int(seconds * 1000)


async def _shards(redis: Any) -> list[str]:
    return await in_use(redis, cluster=is_cluster_client(redis))


async def _mark(redis: Any, shard: str, due_ms: int) -> None:
    """After a script that made a delivery of ``shard`` due at ``due_ms``: its mark in the due index (Cluster)."""
    for command in due.marks(shard, due_ms):
        await redis.execute_command(*command)


def _shard_of(redis: Any, entry: dict) -> str:
    """The shard a notification lives in: its invocation's user's ('' on one node)."""
    return shard_of(entry["app"], entry["user"], cluster=is_cluster_client(redis))


def _outbox_keys(shard: str) -> dict[str, str]:
    """The keys every outcome of a delivery touches: the due index, the outbox and the counters."""
    return {"due": keys.webhook_due(shard), "outbox": keys.webhook_outbox(shard), "stats": keys.webhook_stats(shard)}
