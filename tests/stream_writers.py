"""Test-only writers and a follower for session streams.

In the product, the invocation scripts (``runtime/redis_store/lua/invocations/``) write status entries and keep
the active-invocation floor in the same step as each status change, and readers follow through ``worker.records.follow``. These Python
versions let ``runtime/`` stream tests drive a stream without a worker.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator

from runtime.redis_store import keys
from runtime.redis_store.streams import (
    DEFAULT_STREAM_MAXLEN,
    StreamEntry,
    _publish,
    last_entry_id,
    read_page,
)
from runtime.statuses import SETTLED


async def publish_status(
    client, app: str, user: str, sid: str, invocation_id: str, status: str, detail: dict | None = None,
    *, maxlen: int = DEFAULT_STREAM_MAXLEN, max_age_s: float | None = None,
) -> str:
    """XADD a status entry ``{"status": status, "detail": detail}``; returns the entry id."""
    data = json.dumps({"status": status, "detail": detail or {}}, separators=(",", ":"))
    return await _publish(client, app, user, sid, "status", invocation_id, data, maxlen, max_age_s)


async def mark_invocation_active(
    client, app: str, user: str, sid: str, invocation_id: str, first_entry_id: str | None = None
) -> None:
    """Keep the stream from being trimmed at or after ``first_entry_id`` (default: the newest entry now).

    Marking an invocation that is already active keeps the earlier of the two floors.
    """
    first = first_entry_id or await last_entry_id(client, app, user, sid)
    score = int(first.split("-", 1)[0])
    await client.zadd(keys.session_active_invocations(app, user, sid), {invocation_id: score}, lt=True)
    await client.persist(keys.session_stream(app, user, sid))  # an active invocation keeps it from expiring


async def mark_invocation_settled(client, app: str, user: str, sid: str, invocation_id: str) -> None:
    """Let the stream be trimmed past the invocation's entries again."""
    await client.zrem(keys.session_active_invocations(app, user, sid), invocation_id)


async def follow_stream(
    client, app: str, user: str, sid: str, after: str = "0-0",
    *, invocation_id: str | None = None, block_ms: int = 5_000, until_settled: bool = True,
) -> AsyncIterator[StreamEntry]:
    """Yield entries as they arrive; with ``invocation_id`` and ``until_settled``, stop after its settling status."""
    cursor = after
    while True:
        entries, cursor = await read_page(client, app, user, sid, cursor, invocation_id=invocation_id,
                                          block_ms=block_ms)
        for entry in entries:
            yield entry
            if until_settled and invocation_id is not None and entry.kind == "status" and (
                entry.data.get("status") in SETTLED
            ):
                return
