"""PKCE (RFC 7636) and the OAuth ``state``: random values made here, checked by the provider and by agentq."""

from __future__ import annotations

import base64
import hashlib
import secrets


def new_code_verifier() -> str:
    """A code verifier: 64 URL-safe characters from 48 random bytes (RFC 7636 asks for 43 to 128)."""
    return secrets.token_urlsafe(48)


def s256_challenge(verifier: str) -> str:
    """The S256 code challenge of ``verifier``: BASE64URL(SHA256(verifier)) without padding."""
    digest = hashlib.sha256(verifier.encode("ascii")).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii")


def new_state() -> str:
    """An unguessable, single-use ``state`` binding a provider's redirect to the authorization agentq started."""
    return secrets.token_urlsafe(32)
