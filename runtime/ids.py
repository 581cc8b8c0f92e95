"""Ids agentq makes, in one place: invocation, event, session and function-call ids, and the uuid4 text they use.

A leaf module (standard library only), so the runtime, the worker and the API can all import it.
"""

from __future__ import annotations

import os
import uuid

CLIENT_CALL_ID_PREFIX = "adk-"
"""Function calls the model sent without an id get one with this prefix (as ADK does); it is removed again
before the contents go back to the model."""

_DERIVED_NAMESPACE = uuid.UUID("5d0c4a52-7b0e-4f43-9a55-2f1c6f0a7e21")
"""Fixed, so every process derives the same ids from the same key."""


def uuid4_str() -> str:
    """A random UUID4 in its canonical text form, without the cost of ``uuid.UUID``."""
    raw = bytearray(os.urandom(16))
    raw[6] = (raw[6] & 0x0F) | 0x40
    raw[8] = (raw[8] & 0x3F) | 0x80
    h = raw.hex()
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


def new_invocation_id() -> str:
    """A fresh invocation id, ``e-<uuid4>``."""
    return invocation_id_of(uuid4_str())


def invocation_id_of(uuid_text: str) -> str:
    """The invocation id made of ``uuid_text``: ``e-<uuid>``."""
    return f"e-{uuid_text}"


def new_event_id() -> str:
    """A fresh event id: short, random, URL-safe."""
    return uuid.uuid4().hex[:16]


def new_session_id() -> str:
    """A fresh session id (a uuid4), for a session created without one."""
    return uuid4_str()


def new_client_call_id() -> str:
    """An id for a function call the model sent without one: ``adk-<uuid4>``."""
    return f"{CLIENT_CALL_ID_PREFIX}{uuid4_str()}"


def derived_uuid(key: str) -> str:
    """A uuid5 of ``key``: the same text in every process, for ids that must be found again after a restart."""
    return str(uuid.uuid5(_DERIVED_NAMESPACE, key))
