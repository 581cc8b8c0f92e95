"""AuthCredential and its parts, in the JSON shape ADK clients exchange (camelCase, snake_case accepted).

Secret fields are kept out of ``repr`` so that a credential printed by accident (a log line, a traceback)
shows no token; ``hide_input_in_errors`` does the same for validation errors.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel


class AuthModel(BaseModel, hide_input_in_errors=True):
    """Base of the auth models: camelCase on the wire, either case in, unknown fields kept (ADK allows them)."""

    model_config = ConfigDict(extra="allow", alias_generator=to_camel, populate_by_name=True)

    def wire(self) -> dict:
        """The JSON form: camelCase, no None fields."""
        return self.model_dump(mode="json", by_alias=True, exclude_none=True)


class AuthCredentialTypes(StrEnum):
    """The kind of a credential (ADK's values, which are OpenAPI's security scheme types)."""

    API_KEY = "apiKey"
    HTTP = "http"
    OAUTH2 = "oauth2"
    OPEN_ID_CONNECT = "openIdConnect"
    SERVICE_ACCOUNT = "serviceAccount"


def _secret(default=None):
    return Field(default=default, repr=False)


class OAuth2Auth(AuthModel):
    """An OAuth 2 client and, once a user consented, the tokens it holds for that user."""

    client_id: str | None = None
    client_secret: str | None = _secret()
    auth_uri: str | None = None
    """The provider's authorization URL with this request's parameters (what a user's browser is sent to)."""
    state: str | None = None
    redirect_uri: str | None = None
    auth_response_uri: str | None = _secret()
    """The callback URL the provider redirected to, code included (an ADK client sends it back)."""
    auth_code: str | None = _secret()
    access_token: str | None = _secret()
    refresh_token: str | None = _secret()
    id_token: str | None = _secret()
    expires_at: int | None = None
    """Unix time at which ``access_token`` stops working."""
    expires_in: int | None = None
    audience: str | None = None
    code_verifier: str | None = _secret()
    code_challenge_method: str | None = None
    token_endpoint_auth_method: Literal["client_secret_basic", "client_secret_post"] | None = "client_secret_basic"
    """How the client authenticates at the token endpoint (HTTP Basic, or client_id/secret in the form)."""


class HttpCredentials(AuthModel):
    """A username/password or a bearer token for an HTTP auth scheme."""

    username: str | None = None
    password: str | None = _secret()
    token: str | None = _secret()


class HttpAuth(AuthModel):
    """An HTTP auth scheme (``bearer``, ``basic``) and its credentials."""

    scheme: str
    credentials: HttpCredentials


class AuthCredential(AuthModel):
    """A credential of one of the ``AuthCredentialTypes``; only the part of its type is set."""

    auth_type: AuthCredentialTypes
    resource_ref: str | None = None
    api_key: str | None = _secret()
    http: HttpAuth | None = None
    oauth2: OAuth2Auth | None = None

    def has_token(self) -> bool:
        """True when the credential can be used as it is (an access token, an API key, HTTP credentials)."""
        return bool((self.oauth2 and self.oauth2.access_token) or self.api_key or self.http)
