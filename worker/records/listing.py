"""Cursor pages of a user's invocations (all of them, by status, the parked inbox) and of a user's sessions.

The order is stable: invocations newest first (creation time, then id), sessions by id. A page token holds the
position of the last item looked at, not an offset, so items added or removed meanwhile never shift later
pages: an item present throughout is returned exactly once. Tokens are opaque to callers.

A page costs O(log n + page size) whatever the user's history: the parked inbox reads its own index
(``keys.user_parked``), the full listing the user's index. Filtering by another status or by session has no
index: such a page looks at no more than ``SCAN_BUDGET`` invocations and may come back short, or empty, with a
token; follow tokens until there is none.
"""

from __future__ import annotations

import base64
import binascii
import json
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from runtime.errors import UsageError
from runtime.redis_store import keys
from runtime.redis_store.scripts import SESSION_IDS
from runtime.redis_store.session_layout import build_session
from worker.records.codec import decode_record
from worker.records.record import InvocationRecord

T = TypeVar("T")
MAX_PAGE_SIZE = 1000
SCAN_BUDGET = 1000
"""Invocations one filtered page looks at, at most."""
_CHUNK = 200


@dataclass(frozen=True, kw_only=True)
class Page(Generic[T]):
    """One page of a listing; ``next_page_token`` is None on the last one."""

    items: list[T] = field(default_factory=list)
    next_page_token: str | None = None


def check_page_size(page_size: int) -> int:
    """``page_size`` if it is 1..MAX_PAGE_SIZE, else a UsageError naming it."""
    if isinstance(page_size, bool) or not isinstance(page_size, int) or not 1 <= page_size <= MAX_PAGE_SIZE:
        raise UsageError(f"page size must be an integer from 1 to {MAX_PAGE_SIZE}, got {page_size!r}")
    return page_size


def encode_token(kind: str, *position: Any) -> str:
    """An opaque page token for a position in a listing of ``kind``."""
    raw = json.dumps([kind, *position], separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode_token(token: str, kind: str) -> list:
    """The position a token of ``kind`` holds; UsageError for anything this listing did not hand out."""
    try:
        value = json.loads(base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)))
    except (ValueError, binascii.Error):
        value = None
    if not isinstance(value, list) or not value or value[0] != kind:
        raise UsageError(f"page token {token[:80]!r} is not one this listing handed out")
    return value[1:]


async def invocations_page(
    store, app: str, user: str, *, status: str | None = None, session_id: str | None = None,
    page_size: int = 100, page_token: str | None = None,
) -> Page[InvocationRecord]:
    """A page of the user's invocations, newest first, optionally of one status and one session."""
    check_page_size(page_size)
    index = keys.user_parked(app, user) if status == "parked" else keys.user_invocations(app, user)
    position = None
    if page_token:
        score, last_id = decode_token(page_token, "i")
        position = (float(score), str(last_id))
    exact = status in (None, "parked") and session_id is None
    budget = page_size if exact else max(page_size, SCAN_BUDGET)
    found: list[InvocationRecord] = []
    scanned = 0
    while scanned < budget:
        chunk = await _after(store, index, position, min(_CHUNK, budget - scanned))
        if not chunk:
            return Page(items=found)
        records = await _records(store, app, user, [member for member, _ in chunk], status, session_id)
        for (member, score), record in zip(chunk, records, strict=True):
            position = (score, member)
            scanned += 1
            if record is not None:
                found.append(record)
                if len(found) == page_size:
                    break
        if len(found) == page_size:
            break
    more = await _after(store, index, position, 1)
    return Page(items=found, next_page_token=encode_token("i", *position) if more else None)


async def _after(store, index: str, position: tuple[float, str] | None, count: int) -> list[tuple[str, float]]:
    """Up to ``count`` (member, score) pairs of a creation-scored index after ``position``, newest first."""
    top = "+inf" if position is None else repr(position[0])
    offset = 0
    while True:
        flat = await store.mux.execute_command(
            "ZRANGE", index, top, "-inf", "BYSCORE", "REV", "LIMIT", offset, count, "WITHSCORES")
        pairs = [(flat[i], float(flat[i + 1])) for i in range(0, len(flat), 2)]
        if position is None:
            return pairs
        # Equal scores come in descending member order: those not below the last id were returned already.
        later = [(m, s) for m, s in pairs if s < position[0] or m < position[1]]
        if later or len(pairs) < count:
            return later
        offset += count


async def _records(store, app: str, user: str, ids: list[str], status: str | None,
                   session_id: str | None) -> list[InvocationRecord | None]:
    """The records of ``ids`` that exist and match the filters (None in place of the others)."""
    record_keys = [keys.invocation(app, user, invocation_id) for invocation_id in ids]
    wanted = list(record_keys)
    if status not in (None, "parked") or session_id is not None:
        # Filtered without an index: read two fields first, whole records only for the matches.
        heads = await store.batch(*[("HMGET", key, "status", "session_id") for key in record_keys])
        wanted = [key if _matches(head, status, session_id) else None for key, head in zip(record_keys, heads,
                                                                                              strict=True)]
    replies = await store.batch(*[("HGETALL", key) for key in wanted if key is not None])
    replies.reverse()
    records: list[InvocationRecord | None] = []
    for key in wanted:
        flat = replies.pop() if key is not None else None
        if isinstance(flat, Exception):
            raise flat
        record = decode_record(dict(zip(flat[::2], flat[1::2], strict=True))) if flat else None
        if record is not None and status is not None and record.status != status:
            record = None
        records.append(record)
    return records


def _matches(head: Any, status: str | None, session_id: str | None) -> bool:
    if isinstance(head, Exception):
        raise head
    return (status is None or head[0] == status) and (session_id is None or head[1] == session_id)


async def sessions_page(store, app: str, user: str, *, page_size: int = 100, page_token: str | None = None):
    """A page of the user's sessions (without events, state merged as ``get_session`` merges it), by id."""
    check_page_size(page_size)
    after = str(decode_token(page_token, "s")[0]) if page_token else ""
    ids = await SESSION_IDS(store.mux, user_sessions=keys.user_sessions(app, user),
                            session_ids=keys.user_session_ids(app, user), after=after, count=page_size + 1)
    more = len(ids) > page_size
    ids = ids[:page_size]
    commands = [("HGETALL", keys.app_state(app)), ("HGETALL", keys.user_state(app, user))]
    for sid in ids:
        commands += [("HGETALL", keys.session_meta(app, user, sid)), ("HGETALL", keys.session_state(app, user, sid))]
    replies = await store.batch(*commands)
    failed = next((reply for reply in replies if isinstance(reply, Exception)), None)
    if failed is not None:
        raise failed
    app_state, user_state = _dict(replies[0]), _dict(replies[1])
    sessions = []
    for i in range(len(ids)):
        meta, state = _dict(replies[2 + 2 * i]), _dict(replies[3 + 2 * i])
        if meta:  # deleted since the ids were read
            sessions.append(build_session(meta, state, app_state, user_state, []))
    return Page(items=sessions, next_page_token=encode_token("s", ids[-1]) if more else None)


def _dict(flat: list) -> dict[str, str]:
    return dict(zip(flat[::2], flat[1::2], strict=True))
