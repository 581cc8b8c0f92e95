"""Talking to a provider's token endpoint: a code for tokens (with the PKCE verifier), a refresh for new ones.

What comes back is kept only in an AuthCredential (its secret fields stay out of ``repr``); an error names the
provider's ``error`` code and description, never a token or the client secret.
"""

from __future__ import annotations

import time
from typing import Any

import httpx

from ..errors import CredentialError
from .auth_config import AuthConfig
from .credentials import AuthCredential, AuthCredentialTypes, OAuth2Auth

EXPIRY_MARGIN_S = 30
"""A token this close to its expiry counts as expired: it might lapse before the tool's request arrives."""

TIMEOUT_S = 10.0


def token_url(config: AuthConfig, *, refreshing: bool = False) -> str:
    """The scheme's token URL (its refresh URL for a refresh, when it has one); CredentialError when the scheme
    has no authorization-code flow."""
    flow = config.authorization_code_flow
    if flow is None:
        raise CredentialError("the auth scheme has no authorizationCode flow (authorizationUrl, tokenUrl) to run")
    return (flow.refresh_url or flow.token_url) if refreshing else flow.token_url


def client_of(config: AuthConfig) -> OAuth2Auth:
    """The OAuth 2 client of ``config``; CredentialError when it names no client_id."""
    raw = config.raw_auth_credential
    if raw is None or raw.oauth2 is None or not raw.oauth2.client_id:
        raise CredentialError("the auth config's raw_auth_credential names no oauth2 client_id")
    return raw.oauth2


def is_expired(credential: AuthCredential, now: float | None = None) -> bool:
    """True when the credential's access token has lapsed (or will within ``EXPIRY_MARGIN_S``)."""
    oauth2 = credential.oauth2
    if oauth2 is None or oauth2.expires_at is None:
        return False
    return (now if now is not None else time.time()) + EXPIRY_MARGIN_S >= oauth2.expires_at


async def exchange_code(config: AuthConfig, *, code: str, code_verifier: str, redirect_uri: str) -> AuthCredential:
    """The user's credential for an authorization ``code`` (RFC 6749 4.1.3, with RFC 7636's verifier)."""
    form = {"grant_type": "authorization_code", "code": code, "redirect_uri": redirect_uri,
            "code_verifier": code_verifier}
    return await _token_request(config, form, previous=None)


async def refresh(config: AuthConfig, credential: AuthCredential) -> AuthCredential:
    """A new access token for ``credential`` from its refresh token (RFC 6749 section 6)."""
    if credential.oauth2 is None or not credential.oauth2.refresh_token:
        raise CredentialError("the credential has no refresh_token to refresh it with")
    form = {"grant_type": "refresh_token", "refresh_token": credential.oauth2.refresh_token}
    return await _token_request(config, form, previous=credential)


async def _token_request(config: AuthConfig, form: dict[str, str], previous: AuthCredential | None) -> AuthCredential:
    client = client_of(config)
    url = token_url(config, refreshing=form["grant_type"] == "refresh_token")
    auth = None
    if client.client_secret and client.token_endpoint_auth_method != "client_secret_post":
        auth = httpx.BasicAuth(client.client_id, client.client_secret)
    else:
        form = {**form, "client_id": client.client_id}
        if client.client_secret:
            form["client_secret"] = client.client_secret
    try:
        async with httpx.AsyncClient(timeout=TIMEOUT_S) as http:
            answer = await http.post(url, data=form, auth=auth, headers={"Accept": "application/json"})
    except httpx.HTTPError as exc:
        raise CredentialError(f"the token endpoint {url} could not be reached: {type(exc).__name__}") from None
    body = _json(answer)
    if answer.status_code != 200 or not body.get("access_token"):
        error = body.get("error") or f"HTTP {answer.status_code}"
        description = body.get("error_description")
        raise CredentialError(f"the token endpoint {url} refused the {form['grant_type']} grant: {error}"
                              + (f" ({description})" if description else ""))
    return _credential(body, previous)


def _json(answer: httpx.Response) -> dict[str, Any]:
    try:
        body = answer.json()
    except ValueError:
        return {}
    return body if isinstance(body, dict) else {}


def _credential(body: dict[str, Any], previous: AuthCredential | None) -> AuthCredential:
    try:
        expires_in = int(body["expires_in"])
    except (KeyError, TypeError, ValueError):
        expires_in = None  # no lifetime given: the token is used until the provider refuses it
    expires_at = int(time.time()) + expires_in if expires_in is not None else None
    # A refresh answer may leave the refresh token out: the old one stays valid then (RFC 6749 section 6).
    refresh_token = body.get("refresh_token") or (previous.oauth2.refresh_token if previous else None)
    return AuthCredential(auth_type=AuthCredentialTypes.OAUTH2, oauth2=OAuth2Auth(
        access_token=body["access_token"], refresh_token=refresh_token, id_token=body.get("id_token"),
        expires_at=expires_at, expires_in=expires_in, token_endpoint_auth_method=None))
