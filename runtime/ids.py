"""Ids agentq makes, in one place: invocation ids (``e-<uuid4>``, as ADK makes them) and the uuid4 text they use.

A leaf module (standard library only), so the runtime, the worker and the API can all import it.
"""

from __future__ import annotations

import os


def uuid4_str() -> str:
    """A random UUID4 in its canonical text form, without the cost of ``uuid.UUID``."""
    raw = bytearray(os.urandom(16))
    raw[6] = (raw[6] & 0x0F) | 0x40
    raw[8] = (raw[8] & 0x3F) | 0x80
    h = raw.hex()
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


def new_invocation_id() -> str:
    """A fresh invocation id, ``e-<uuid4>``."""
    return f"e-{uuid4_str()}"
