"""AuthConfig: what a tool asks for (a scheme and its client) and, later, what the user's consent gave."""

from __future__ import annotations

import hashlib
import json
from typing import Any

from pydantic import model_validator

from .credentials import AuthCredential, AuthModel
from .schemes import OAuth2

_PER_REQUEST_FIELDS = {"auth_uri", "state", "redirect_uri", "auth_response_uri", "auth_code", "access_token",
                       "refresh_token", "id_token", "expires_at", "expires_in", "code_verifier", "client_secret"}
"""OAuth2Auth fields that change from one consent to the next (or rotate): left out of the credential key."""


class AuthConfig(AuthModel):
    """The auth scheme, the client's raw credential, the exchanged credential, and the key it is stored under."""

    auth_scheme: OAuth2
    raw_auth_credential: AuthCredential | None = None
    """The client: id and secret (OAuth 2)."""
    exchanged_auth_credential: AuthCredential | None = None
    """The user's tokens once the flow completed (an ADK client may fill it in its answer)."""
    credential_key: str | None = None
    """Where the user's credential is kept in a credential service; derived from the scheme and the client
    when not given, so the same tool asks for and finds the same credential in every invocation."""

    @model_validator(mode="after")
    def _derive_key(self) -> AuthConfig:
        if not self.credential_key:
            self.credential_key = derive_credential_key(self)
        return self

    def redacted(self) -> AuthConfig:
        """A copy without the client secret and without any token: what may go into an event."""
        copy = self.model_copy(deep=True)
        for credential in (copy.raw_auth_credential, copy.exchanged_auth_credential):
            if credential is not None and credential.oauth2 is not None:
                for name in _PER_REQUEST_FIELDS - {"auth_uri", "state", "redirect_uri", "expires_at", "expires_in"}:
                    setattr(credential.oauth2, name, None)
            if credential is not None:
                credential.api_key = None
                credential.http = None
        return copy

    @property
    def authorization_code_flow(self):
        """The scheme's authorization-code flow (None when it offers none)."""
        return self.auth_scheme.flows.authorization_code


def _digest(value: Any) -> str:
    canonical = json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()[:16]


def derive_credential_key(config: AuthConfig) -> str:
    """``oauth2_<scheme digest>_<client digest>``: stable across processes and runs (no ``hash()``), and
    independent of the per-consent fields (state, code, tokens) and of the client secret (which may rotate)."""
    scheme = config.auth_scheme.model_dump(mode="json", by_alias=True, exclude_none=True)
    raw = config.raw_auth_credential
    client = {}
    if raw is not None:
        client = raw.model_dump(mode="json", by_alias=False, exclude_none=True, exclude={"api_key", "http"})
        if isinstance(client.get("oauth2"), dict):
            client["oauth2"] = {k: v for k, v in client["oauth2"].items() if k not in _PER_REQUEST_FIELDS}
    return f"{config.auth_scheme.type_}_{_digest(scheme)}_{_digest(client)}"
