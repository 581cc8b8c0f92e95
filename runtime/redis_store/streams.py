"""Per-session event streams: every event (partial ones too) and every status change, in order.

Entries carry three fields: ``kind`` ('event' | 'status'), ``inv`` (the invocation id) and ``data`` (JSON:
the event's camelCase dict, or ``{"status": ..., "detail": {...}}``). The session service's commit script
XADDs committed events; partial events go out with ``publish_event``; the worker's status scripts
(``runtime/redis_store/lua/invocations/``) XADD status entries in the same step as each status change. A reader resumes after any entry id (SSE ``Last-Event-ID``) and sees each entry once.

Trimming: the XADDs trim the stream (a commit every few versions, a partial chunk not at all, see
``publish_event``; status changes and every settle always) once it is ``maxlen`` + 10% long (to ``maxlen``) or, with
``max_age_s``, holds entries older than that; but never at or after the *floor*, the first entry of the
oldest active invocation. Active invocations live in a sorted set (``keys.session_active_invocations``)
scored by the millisecond part of their first entry id (so the floor errs early by at most one
millisecond's entries); the worker's scripts add an invocation when it is queued or starts and remove it when
it settles. Entries of settled invocations are kept while
they are among the newest ``maxlen`` (and younger than ``max_age_s``); a reader resuming after a trimmed
entry simply continues from the oldest entry still there. With ``max_age_s``, a stream no active invocation
needs also expires ``max_age_s`` after its last write (all its entries would be trimmed by age by then), so an
idle session does not keep its stream for ever.

Reading one invocation out of a busy session: ``read_page`` also returns the id it scanned up to, so the
next call skips other invocations' entries instead of scanning them again (``worker.records.follow`` does this).
"""

from __future__ import annotations

import json
import re
import time
from typing import Any, Literal

from pydantic import BaseModel

from ..errors import UsageError
from ..events import Event
from . import keys
from .blocking_reads import BlockingReads
from .codec import text
from .mux import Pipelined, queue_command
from .scripts import PUBLISH_ENTRY

DEFAULT_STREAM_MAXLEN = 10_000
_ENTRY_ID = re.compile(r"\d{1,20}-\d{1,20}")


class StreamEntry(BaseModel):
    """One stream entry: its id (``ms-seq``), kind, invocation, and JSON payload."""

    id: str
    kind: Literal["event", "status"]
    invocation_id: str
    data: dict[str, Any]


def trim_args(maxlen: int, max_age_s: float | None) -> dict[str, int]:
    """The ``maxlen``, ``slack`` and ``max_age_ms`` arguments every script that XADDs takes."""
    slack = max(1, maxlen // 10) if maxlen > 0 else 0
    return {"maxlen": maxlen, "slack": slack, "max_age_ms": int(max_age_s * 1000) if max_age_s else 0}


async def _publish(client, app, user, sid, kind, invocation_id, data: str, maxlen, max_age_s) -> str:
    entry = await PUBLISH_ENTRY(
        client, stream=keys.session_stream(app, user, sid), active=keys.session_active_invocations(app, user, sid),
        kind=kind, invocation_id=invocation_id, data=data, **trim_args(maxlen, max_age_s))
    return text(entry)


async def publish_event(
    client, app: str, user: str, sid: str, invocation_id: str, event: Event,
    *, maxlen: int = DEFAULT_STREAM_MAXLEN, max_age_s: float | None = None,
) -> str:
    """XADD an event that is not committed (a partial chunk) to the session's stream; returns the entry id.

    A chunk is published once per streamed piece of a model answer, so it is one plain XADD, no script: the
    length is looked at by the invocation's commits and its settle (a running invocation keeps its entries
    anyway: it is active). With ``max_age_s`` the chunk trims as other entries do."""
    if max_age_s is None:
        stream = keys.session_stream(app, user, sid)
        return text(await client.execute_command("XADD", stream, "*", "kind", "event", "inv", invocation_id,
                                                 "data", event.to_json()))
    return await _publish(client, app, user, sid, "event", invocation_id, event.to_json(), maxlen, max_age_s)


async def last_entry_id(client, app: str, user: str, sid: str) -> str:
    """The id of the stream's newest entry, or '0-0' when it is empty (a reader's "from now on")."""
    newest = await client.xrevrange(keys.session_stream(app, user, sid), count=1)
    return text(newest[0][0]) if newest else "0-0"


def _entry(entry_id, fields) -> StreamEntry:
    # redis-py replies with a dict of fields; a reply as Redis sent it (BlockingReads, a mux) with a flat list
    pairs = fields.items() if isinstance(fields, dict) else zip(fields[::2], fields[1::2], strict=True)
    fields = {text(k): text(v) for k, v in pairs}
    return StreamEntry(
        id=text(entry_id), kind=fields["kind"], invocation_id=fields["inv"], data=json.loads(fields["data"])
    )


async def _scan(client, stream: str, after: str, count: int, block_ms: int | None) -> list:
    if isinstance(client, Pipelined | BlockingReads):  # replies as Redis sends them
        if block_ms is None:
            return await queue_command(client, "XRANGE", stream, "(" + after, "+", "COUNT", count)
        reply = await client.execute_command("XREAD", "COUNT", count, "BLOCK", block_ms, "STREAMS", stream, after)
        return reply[0][1] if reply else []
    if block_ms is None:
        return await client.xrange(stream, min="(" + after, max="+", count=count)
    reply = await client.xread({stream: after}, count=count, block=block_ms)
    return reply[0][1] if reply else []


async def read_stream(
    client, app: str, user: str, sid: str, after: str = "0-0",
    *, invocation_id: str | None = None, block_ms: int | None = None, count: int = 100,
) -> list[StreamEntry]:
    """Up to ``count`` entries after ``after`` (of one invocation when given), oldest first.

    With ``block_ms``, waits up to that long for a matching entry when none is there yet (0 = forever).
    """
    page, _ = await read_page(client, app, user, sid, after, invocation_id=invocation_id, block_ms=block_ms,
                              count=count)
    return page


async def read_page(
    client, app: str, user: str, sid: str, after: str = "0-0",
    *, invocation_id: str | None = None, block_ms: int | None = None, count: int = 100,
) -> tuple[list[StreamEntry], str]:
    """Like ``read_stream``, and also the id scanned up to: resume from it to skip other invocations' entries."""
    after = text(after)
    if not _ENTRY_ID.fullmatch(after):
        raise UsageError(f"stream entry id {after!r} is not of the form '<milliseconds>-<sequence>'")
    stream = keys.session_stream(app, user, sid)
    cursor = after
    deadline = None if not block_ms else time.monotonic() + block_ms / 1000
    while True:
        wait_ms = None
        if block_ms is not None:
            wait_ms = 0 if deadline is None else int((deadline - time.monotonic()) * 1000)
            if deadline is not None and wait_ms <= 0:
                wait_ms = None  # time is up: one last look without blocking
        # A blocking XREAD returns at once when entries are there already: no separate look first.
        raw = await _scan(client, stream, cursor, count, wait_ms)
        if not raw:
            return [], cursor
        cursor = text(raw[-1][0])
        entries = [_entry(entry_id, fields) for entry_id, fields in raw]
        if invocation_id is not None:
            entries = [entry for entry in entries if entry.invocation_id == invocation_id]
        if entries:
            return entries, cursor
