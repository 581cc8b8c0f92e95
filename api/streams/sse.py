"""Server-sent events: framing stream entries and ADK's ``/run_sse`` frames (sending them: event_stream)."""

from __future__ import annotations

import json
import re
from typing import Any

from runtime.errors import UsageError

SSE_HEADERS = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no", "Connection": "keep-alive"}
"""Headers that keep proxies from buffering or caching a stream."""

KEEPALIVE = b": keepalive\n\n"

_ENTRY_ID = re.compile(r"^(\d{1,20})-(\d{1,20})$")
_MAX_PART = 2**64 - 1  # Redis stream ids are two unsigned 64-bit numbers


class InvalidLastEventIdError(UsageError):
    """Raised when Last-Event-ID (or ``?after=``) is not a stream entry id like ``1700000000000-0``, or is past
    the newest entry of its stream."""


def check_entry_id(value: str | None, source: str = "Last-Event-ID") -> str | None:
    """``value`` when it is a valid stream entry id (or empty/None: from the start); ``source`` names where it
    came from in the error."""
    if value is None or value.strip() == "":
        return None
    value = value.strip()
    match = _ENTRY_ID.match(value)
    if not match:
        raise InvalidLastEventIdError(f"{source} {value!r} is not a stream entry id like '1700000000000-0'")
    if max(int(part) for part in match.groups()) > _MAX_PART:
        raise InvalidLastEventIdError(f"{source} {value!r} is out of range: each part of a stream entry id is "
                                      f"at most {_MAX_PART}")
    return value


def entry_key(entry_id: str) -> tuple[int, int]:
    """A stream entry id as a pair that sorts as Redis orders the entries."""
    ms, seq = entry_id.split("-", 1)
    return int(ms), int(seq)


def entry_before(entry_id: str) -> str:
    """The stream id just before ``entry_id``: reading after it starts at that entry."""
    ms, seq = (int(part) for part in entry_id.split("-", 1))
    if seq:
        return f"{ms}-{seq - 1}"
    return f"{ms - 1}-18446744073709551615" if ms else "0-0"


def entry_json(data: Any) -> str:
    """A stream entry's payload as one line of JSON."""
    if isinstance(data, bytes):
        data = data.decode()
    if isinstance(data, str):
        # Stored JSON is passed through; re-encode only if it spans lines (a data: line must not).
        return data if "\n" not in data else json.dumps(json.loads(data), separators=(",", ":"))
    if hasattr(data, "to_json"):
        return data.to_json()
    if hasattr(data, "model_dump_json"):
        return data.model_dump_json(by_alias=True, exclude_none=True)
    return json.dumps(data, separators=(",", ":"), default=str)


def frame(data: str, *, entry_id: str | None = None, event: str | None = None) -> bytes:
    """One SSE frame: optional ``id:`` and ``event:`` lines, one ``data:`` line, blank line."""
    lines = []
    if entry_id is not None:
        lines.append(f"id: {entry_id}")
    if event is not None:
        lines.append(f"event: {event}")
    lines.append(f"data: {data}")
    return ("\n".join(lines) + "\n\n").encode()


def entry_frame(entry: Any) -> bytes:
    """The frame of a stream entry: events are default ``message`` frames, status entries ``event: status``.

    A status entry's data gains ``invocationId`` (events carry theirs already), so a session stream's status
    frames say whose status they are.
    """
    kind = getattr(entry, "kind", "event")
    if kind == "event":
        return frame(entry_json(entry.data), entry_id=entry.id)
    data = entry.data
    invocation_id = getattr(entry, "invocation_id", None)
    if isinstance(data, dict) and invocation_id:
        data = {**data, "invocationId": invocation_id}
    return frame(entry_json(data), entry_id=entry.id, event=kind)
