"""The webhook outbox in Redis: notifications waiting to be delivered, their claims, and the dead-letter list.

The status scripts (``notify`` in ``runtime/redis_store/lua/lib/invocation_status.lua``) add a notification in
the same step as the transition it reports: a JSON entry in ``keys.webhook_outbox()`` and its id in ``keys.webhook_due()`` scored by when it is
next tried. Workers claim due ones (the claim pushes the score past the send, so no other worker sends it at the
same time; a worker that dies mid-send leaves it to be claimed again after ``hold_s``), then record the outcome:
delivered (gone), failed (tried again later) or dead (moved to the dead-letter list, newest ``DEAD_LIMIT`` kept).
Each script also counts its outcome in ``keys.webhook_stats()``, which ``/metrics`` reads.
"""

from __future__ import annotations

import json
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

DEAD_LIMIT = 10_000
"""Dead letters kept; older ones are dropped as new ones arrive."""


async def claim(redis: Any, *, limit: int, hold_s: float, now: float | None = None) -> list[dict]:
    """Up to ``limit`` due notifications, each held for ``hold_s`` seconds from now (oldest due first)."""
    now_ms = _ms(time.time() if now is None else now)
    raw = await WEBHOOK_CLAIM(redis, due=keys.webhook_due(), outbox=keys.webhook_outbox(), now_ms=now_ms,
                              hold_ms=_ms(hold_s), limit=limit)
    return [json.loads(text(entry)) for entry in raw]


async def delivered(redis: Any, entry: dict) -> None:
    """The receiver accepted it: it leaves the outbox."""
    await WEBHOOK_DELIVERED(redis, **_outbox_keys(), id=entry["id"])


async def retry(redis: Any, entry: dict, *, at: float, error: str) -> None:
    """A failed attempt: try again at ``at`` (unix seconds), remembering the attempt count and the error."""
    entry = {**entry, "attempts": entry.get("attempts", 0) + 1, "last_error": error}
    await WEBHOOK_RETRY(redis, **_outbox_keys(), id=entry["id"], entry_json=json.dumps(entry), next_ms=_ms(at))


async def dead(redis: Any, entry: dict, *, error: str, now: float | None = None) -> None:
    """A failed last attempt: the notification moves to the dead-letter list."""
    now = time.time() if now is None else now
    member = f"{_ms(now):015d}:{entry['id']}"
    entry = {**entry, "attempts": entry.get("attempts", 0) + 1, "last_error": error, "dead_at": now,
             "member": member}
    await WEBHOOK_DEAD(redis, **_outbox_keys(), dead=keys.webhook_dead(), dead_entries=keys.webhook_dead_entries(),
                       id=entry["id"], entry_json=json.dumps(entry), member=member, limit=DEAD_LIMIT)


async def dead_letters(redis: Any, *, limit: int, after: str | None = None) -> tuple[list[dict], str | None]:
    """Dead letters newest first, after the cursor ``after``; the page and the next cursor (None: no more)."""
    start = "+" if after is None else "(" + after
    members = [text(m) for m in await redis.zrevrangebylex(keys.webhook_dead(), start, "-", start=0, num=limit)]
    if not members:
        return [], None
    ids = [member.partition(":")[2] for member in members]
    raw = await redis.hmget(keys.webhook_dead_entries(), ids)
    entries = [json.loads(text(item)) for item in raw if item is not None]
    return entries, members[-1] if len(members) == limit else None


async def dead_letter(redis: Any, delivery_id: str) -> dict | None:
    """One dead letter by its delivery id (None: not in the list)."""
    raw = await redis.hget(keys.webhook_dead_entries(), delivery_id)
    return None if raw is None else json.loads(text(raw))


async def redeliver(redis: Any, entry: dict, *, now: float | None = None, actor: dict | None = None) -> bool:
    """Put a dead letter back in the outbox with a fresh retry window (same delivery id); False if it is gone.

    ``actor`` is recorded on the invocation's record (and the app's audit index) in the same script call."""
    from . import audit

    now = time.time() if now is None else now
    fresh = {name: value for name, value in entry.items() if name not in ("member", "dead_at")}
    fresh.update(attempts=0, at=repr(now))
    record = audit.entry("redeliver", actor, _ms(now) / 1000, delivery_id=entry["id"])
    return bool(await WEBHOOK_REDELIVER(
        redis, due=keys.webhook_due(), outbox=keys.webhook_outbox(), dead=keys.webhook_dead(),
        dead_entries=keys.webhook_dead_entries(), record=keys.invocation(entry["app"], entry["user"], entry["inv"]),
        app_audit=keys.app_audit(entry["app"]), id=entry["id"], entry_json=json.dumps(fresh),
        member=entry["member"], now_ms=_ms(now), **audit.script_args(record, entry["user"], entry["inv"])))


async def stats(redis: Any) -> dict[str, float]:
    """Counters (delivered, failed attempts, dead) and sizes (pending, dead_letters) for /metrics."""
    pipe = redis.pipeline(transaction=False)
    pipe.hgetall(keys.webhook_stats())
    pipe.zcard(keys.webhook_due())
    pipe.zcard(keys.webhook_dead())
    counters, pending, dead_count = await pipe.execute()
    values = {text(name): float(value) for name, value in counters.items()}
    return {"delivered": values.get("delivered", 0.0), "failed": values.get("failed", 0.0),
            "dead": values.get("dead", 0.0), "pending": float(pending), "dead_letters": float(dead_count)}


def _ms(seconds: float) -> int:
    return int(seconds * 1000)


def _outbox_keys() -> dict[str, str]:
    """The keys every outcome of a delivery touches: the due index, the outbox and the counters."""
    return {"due": keys.webhook_due(), "outbox": keys.webhook_outbox(), "stats": keys.webhook_stats()}
