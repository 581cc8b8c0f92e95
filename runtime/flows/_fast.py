"""Cheap constructors for the objects the hot path makes for every event.

Validating pydantic models the framework itself builds from already-typed values is pure cost (and
``model_construct`` is slower still on google-genai's many-field types); copying a prototype is fastest.
"""

from __future__ import annotations

import os
import time
from typing import Any

from google.genai import types

from ..events import Event, EventActions

_EVENT = Event(author="prototype")
_PART = types.Part()
_RESPONSE = types.FunctionResponse()


def uuid4_str() -> str:
    """A random UUID4 in its canonical text form, without the cost of ``uuid.UUID``."""
    raw = bytearray(os.urandom(16))
    raw[6] = (raw[6] & 0x0F) | 0x40
    raw[8] = (raw[8] & 0x3F) | 0x80
    h = raw.hex()
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


def event(*, actions: EventActions | None = None, **fields: Any) -> Event:
    """A new Event with a fresh id, timestamp and (unless given) actions; ``fields`` must be well typed."""
    fields.setdefault("id", os.urandom(8).hex())
    fields.setdefault("timestamp", time.time())
    fields["actions"] = actions if actions is not None else EventActions()
    return _EVENT.model_copy(update=fields)


def function_response_part(call_id: str | None, name: str | None, response: dict[str, Any]) -> types.Part:
    """A Part carrying one FunctionResponse."""
    answer = _RESPONSE.model_copy(update={"id": call_id, "name": name, "response": response})
    return _PART.model_copy(update={"function_response": answer})


def content(role: str, parts: list[types.Part]) -> types.Content:
    """A Content (two fields: construct is cheap here)."""
    return types.Content.model_construct(role=role, parts=parts)
