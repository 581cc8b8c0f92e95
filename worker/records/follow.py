"""Reading invocations back: their stream entries until they settle, a session's entries, waiting for a settle.

Every blocking read is capped at ``BLOCK_MS`` and looped, so none outlives redis-py's socket timeout (5 s by
default in redis-py 8) and a reader notices a cancelled caller promptly.

A deleted session takes its stream along: a reader that finds the stream gone after a quiet read ends, an
invocation's reader with the status its record ended with (cancelled, saying why).
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator

from runtime.errors import InvocationNotFoundError
from runtime.redis_store import keys, streams
from runtime.statuses import SETTLED
from worker.records.codec import decode_record
from worker.records.record import InvocationRecord
from worker.records.store import InvocationStore, pairs

BLOCK_MS = 2_000
"""Longest single blocking stream read."""


async def follow(store: InvocationStore, invocation_id: str, after: str | None = None) -> AsyncIterator[streams.StreamEntry]:
    """Entries of one invocation until it settles (a settling entry with later entries after it is passed)."""
    where = await store.locate(invocation_id)
    if after is None:
        first = store.first_entry(invocation_id)  # known when this process enqueued it: no record read
        if first is None:
            first = (await store.get(invocation_id)).first_entry
        after = _before(first) if first else "0-0"
    cursor = after
    # Blocking reads on connections lent one read at a time (``BlockingReads``), the one look past a settle on
    # the pipelined connection: both cost a third of redis-py's pool path, several times per invocation.
    reads = store.clients.blocking()
    while True:
        entries, cursor = await streams.read_page(
            reads, where.app, where.user, where.session, cursor,
            invocation_id=invocation_id, block_ms=BLOCK_MS,
        )
        if not entries:
            last = await _ended_with_session(store, where, invocation_id)
            if last is not None:
                yield last
                return
        for index, entry in enumerate(entries):
            yield entry
            if entry.kind == "status" and entry.data.get("status") in SETTLED:
                if index + 1 < len(entries):
                    continue
                later, _ = await streams.read_page(store.mux, where.app, where.user, where.session,
                                                   entry.id, invocation_id=invocation_id)
                if not later:
                    return

async def _ended_with_session(store: InvocationStore, where, invocation_id: str) -> streams.StreamEntry | None:
    """The invocation's last status when its session (and stream) is gone and it has settled; else None."""
    if await store.redis.exists(keys.session_stream(where.app, where.user, where.session)):
        return None
    settled_key = keys.invocation_settled(where.app, where.user, invocation_id)
    newest, fields = await store.batch(("XREVRANGE", settled_key, "+", "-", "COUNT", 1),
                                       ("HGETALL", store.record_key(invocation_id, where)))
    for reply in (newest, fields):
        if isinstance(reply, Exception):
            raise reply
    if not fields:  # its retention has passed too
        raise InvocationNotFoundError(f"invocation {invocation_id!r} does not exist")
    record = decode_record(pairs(fields))
    if not record.settled:
        return None
    detail: dict = {"reason": record.cancel_reason} if record.cancel_reason else {}
    if record.error is not None and record.status == "failed":
        detail = {"error": record.error.to_json_dict()}
    entry_id = newest[0][0] if newest else f"{int(record.updated_at * 1000)}-0"
    return streams.StreamEntry(id=entry_id, kind="status", invocation_id=invocation_id,
                               data={"status": record.status, "detail": detail})


async def stream_position(store: InvocationStore, invocation_id: str) -> str:
    """The newest entry id of the invocation's session stream."""
    where = await store.locate(invocation_id)
    return await session_position(store, where.app, where.user, where.session)


async def session_position(store: InvocationStore, app: str, user: str, session_id: str) -> str:
    """The newest entry id of the session's stream ('0-0' when it is empty or gone)."""
    return await streams.last_entry_id(store.redis, app, user, session_id)


async def follow_session(
    store: InvocationStore, app: str, user: str, session_id: str, after: str | None = None, *, follow: bool = True
) -> AsyncIterator[streams.StreamEntry]:
    """Every entry of a session; with ``follow`` it blocks for new ones forever."""
    cursor = after or "0-0"
    while True:
        entries, cursor = await streams.read_page(store.redis, app, user, session_id, cursor,
                                                  block_ms=BLOCK_MS if follow else None, count=500)
        if not entries and (not follow or not await store.redis.exists(keys.session_meta(app, user, session_id))):
            return  # caught up; or, following, the session was deleted
        for entry in entries:
            yield entry

async def wait(store: InvocationStore, invocation_id: str, timeout: float | None) -> InvocationRecord:
    """The record once it is settled; TimeoutError after ``timeout`` seconds.

    Blocks on the invocation's own ``settled`` stream, which gets one entry per settle, so a waiter wakes
    once instead of for every event of the session. Only the status is read until it is settled; the whole
    record (whose decoding costs more than the reads) once, at the end.
    """
    where = await store.locate(invocation_id)
    settled_key = keys.invocation_settled(where.app, where.user, invocation_id)
    record_key = store.record_key(invocation_id, where)
    newest, status = await store.batch(("XREVRANGE", settled_key, "+", "-", "COUNT", 1),
                                       ("HGET", record_key, "status"))
    for reply in (newest, status):
        if isinstance(reply, Exception):
            raise reply
    if status is None:
        raise InvocationNotFoundError(f"invocation {invocation_id!r} does not exist")
    cursor = newest[0][0] if newest else "0-0"
    deadline = None if timeout is None else time.monotonic() + timeout
    while status not in SETTLED:
        if deadline is not None and time.monotonic() >= deadline:
            raise TimeoutError(f"invocation {invocation_id!r} did not settle within {timeout}s")
        left_ms = BLOCK_MS if deadline is None else int((deadline - time.monotonic()) * 1000)
        reply = await store.redis.xread({settled_key: cursor}, count=16, block=max(1, min(BLOCK_MS, left_ms)))
        if reply:
            cursor, fields = reply[0][1][-1]
            status = fields.get("status")  # each settle entry names the status it settled with
    record = await store.get(invocation_id)
    if not record.settled:  # resumed between the status read and this one: wait for the next settle
        return await wait(store, invocation_id, None if deadline is None else max(0.0, deadline - time.monotonic()))
    return record


def _before(entry_id: str) -> str:
    ms, seq = (int(part) for part in entry_id.split("-", 1))
    return f"{ms}-{seq - 1}" if seq else f"{ms - 1}-18446744073709551615"
