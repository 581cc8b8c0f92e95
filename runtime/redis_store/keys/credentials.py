"""Keys of users' credentials (OAuth 2 tokens), held credential requests and OAuth states. Every value under
them is encrypted (``runtime.auth.sealing``): a dump of Redis shows no token and no client secret."""

from __future__ import annotations

from ._naming import PREFIX, _part, user_tag


def user_credential(app_name: str, user_id: str, credential_key: str) -> str:
    """String: one user's credential for one AuthConfig's ``credential_key``, encrypted."""
    return f"{PREFIX}{user_tag(app_name, user_id)}:cred:{_part(credential_key)}"


def user_credential_keys(app_name: str, user_id: str) -> str:
    """Set: the ``credential_key`` of every credential stored for one user in one app (so the user's
    credentials can be deleted with the user, without a SCAN)."""
    return f"{PREFIX}{user_tag(app_name, user_id)}:cred-keys"


def credential_request(app_name: str, user_id: str, invocation_id: str, request_id: str) -> str:
    """String: the full AuthConfig (client secret included) of a pending ``adk_request_credential`` call,
    encrypted; written by the worker when the invocation parks on it, read by the API to exchange the code."""
    return f"{PREFIX}{user_tag(app_name, user_id)}:cred-req:{_part(invocation_id)}:{_part(request_id)}"


def oauth_state(state: str) -> str:
    """String: what one authorization in progress is bound to (invocation, call, user, PKCE verifier),
    encrypted, read once (GETDEL) by the callback; it expires if the user never comes back."""
    return f"{PREFIX}oauth-state:{_part(state)}"
