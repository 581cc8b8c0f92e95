"""Standard Webhooks signatures: HMAC-SHA256 over ``{id}.{timestamp}.{body}``, sent as ``v1,<base64>``.

A receiver checks ``webhook-signature`` against its own computation (``verify``), rejects timestamps too far
from its clock (replays), and deduplicates on ``webhook-id``. See https://www.standardwebhooks.com.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import time
from collections.abc import Mapping

from runtime.errors import UsageError

SECRET_PREFIX = "whsec_"
TOLERANCE_S = 300
"""How far a timestamp may be from the receiver's clock before ``verify`` refuses it (Standard Webhooks' 5 min)."""


def secret_key(secret: str) -> bytes:
    """The HMAC key: the base64 part of a ``whsec_`` secret decoded, any other text as its UTF-8 bytes."""
    if secret.startswith(SECRET_PREFIX):
        try:
            return base64.b64decode(secret[len(SECRET_PREFIX):], validate=True)
        except (binascii.Error, ValueError):
            raise UsageError("AGENTQ_WEBHOOK_SECRET starts with 'whsec_' but the rest is not base64") from None
    return secret.encode()


def sign(key: bytes, message_id: str, timestamp: int, body: bytes) -> str:
    """The ``webhook-signature`` header value for one message."""
    signed = f"{message_id}.{timestamp}.".encode() + body
    return "v1," + base64.b64encode(hmac.new(key, signed, hashlib.sha256).digest()).decode()


def headers(key: bytes | None, message_id: str, body: bytes, now: float | None = None) -> dict[str, str]:
    """The Standard Webhooks headers of one delivery attempt (no signature without a key)."""
    timestamp = int(time.time() if now is None else now)
    out = {"webhook-id": message_id, "webhook-timestamp": str(timestamp), "content-type": "application/json"}
    if key is not None:
        out["webhook-signature"] = sign(key, message_id, timestamp, body)
    return out


def verify(key: bytes, received: Mapping[str, str], body: bytes, *, now: float | None = None,
           tolerance_s: float = TOLERANCE_S) -> bool:
    """True when one of the space-separated ``v1,`` signatures matches and the timestamp is fresh."""
    try:
        message_id = received["webhook-id"]
        timestamp = int(received["webhook-timestamp"])
        signatures = received["webhook-signature"].split()
    except (KeyError, ValueError):
        return False
    if abs((time.time() if now is None else now) - timestamp) > tolerance_s:
        return False
    expected = sign(key, message_id, timestamp, body)
    return any(hmac.compare_digest(expected, candidate) for candidate in signatures)
