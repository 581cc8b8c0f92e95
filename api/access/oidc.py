"""OIDC/JWT bearer tokens: verified against a JWKS (a file or a URL) with PyJWT, mapped to a principal.

A token must be signed by a key of the JWKS (found by its ``kid``), carry the configured issuer and audience,
and not be expired (``leeway_s`` of clock skew allowed); anything else is a 401 naming what failed. Its claims
give the principal id (``sub`` by default), its users (default: just the principal), its apps (default: any)
and its roles (default: none, so a token grants only what its issuer says).
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from pathlib import Path

import jwt

from api.access.auth import ALL_ROLES, WILDCARD, KeyGrant, UnauthorizedError
from runtime.errors import UsageError

CACHE_SIZE = 1024
"""Verified tokens kept (by their full text, signature included) so a page's repeated calls verify once."""


@dataclass(kw_only=True)
class OidcSettings:
    """Where the signing keys are and what a token must say (``AGENTQ_OIDC_*``)."""

    issuer: str
    audience: str
    jwks_file: str | None = None
    jwks_url: str | None = None
    leeway_s: float = 30.0
    algorithms: list[str] = field(default_factory=lambda: ["RS256", "ES256", "PS256", "EdDSA"])
    principal_claim: str = "sub"
    users_claim: str = "agentq_users"
    apps_claim: str = "agentq_apps"
    roles_claim: str = "agentq_roles"

    @classmethod
    def from_env(cls, env: dict[str, str]) -> OidcSettings | None:
        """From ``AGENTQ_OIDC_ISSUER``, ``_AUDIENCE``, ``_JWKS_FILE`` or ``_JWKS_URL``, ``_LEEWAY_S``,
        ``_ALGORITHMS`` and the ``_*_CLAIM`` names; None when no issuer is set (tokens not accepted)."""
        issuer = env.get("AGENTQ_OIDC_ISSUER")
        if not issuer:
            return None
        audience = env.get("AGENTQ_OIDC_AUDIENCE")
        if not audience:
            raise UsageError("AGENTQ_OIDC_ISSUER is set: set AGENTQ_OIDC_AUDIENCE too (the API's client id)")
        extra = {name: env[f"AGENTQ_OIDC_{name.upper()}"] for name in
                 ("principal_claim", "users_claim", "apps_claim", "roles_claim") if env.get(f"AGENTQ_OIDC_{name.upper()}")}
        if env.get("AGENTQ_OIDC_ALGORITHMS"):
            extra["algorithms"] = [a.strip() for a in env["AGENTQ_OIDC_ALGORITHMS"].split(",") if a.strip()]
        return cls(issuer=issuer, audience=audience, jwks_file=env.get("AGENTQ_OIDC_JWKS_FILE"),
                   jwks_url=env.get("AGENTQ_OIDC_JWKS_URL"), leeway_s=float(env.get("AGENTQ_OIDC_LEEWAY_S", "30")),
                   **extra)


class OidcVerifier:
    """Verifies bearer tokens; ``verify`` returns ``(principal_id, grant)`` or raises UnauthorizedError."""

    def __init__(self, settings: OidcSettings):
        if bool(settings.jwks_file) == bool(settings.jwks_url):
            raise UsageError("OIDC: set exactly one of AGENTQ_OIDC_JWKS_FILE and AGENTQ_OIDC_JWKS_URL")
        self.settings = settings
        self._jwks: jwt.PyJWKSet | None = None
        self._client: jwt.PyJWKClient | None = None
        if settings.jwks_file:
            path = Path(settings.jwks_file)
            if not path.is_file():
                raise UsageError(f"OIDC JWKS file {str(path)!r} does not exist")
            try:
                self._jwks = jwt.PyJWKSet.from_dict(json.loads(path.read_text()))
            except (ValueError, jwt.PyJWTError) as exc:
                raise UsageError(f"OIDC JWKS file {str(path)!r} is not a valid JWKS: {exc}") from exc
        else:  # fetched on first use and when an unknown kid shows up (PyJWKClient caches the set)
            self._client = jwt.PyJWKClient(settings.jwks_url, cache_jwk_set=True, lifespan=300)
        self._cache: dict[str, tuple[float, str, KeyGrant]] = {}

    def verify(self, token: str) -> tuple[str, KeyGrant]:
        """The token's principal id and grant; UnauthorizedError naming what is wrong with it."""
        cached = self._cache.get(token)
        if cached is not None and cached[0] + self.settings.leeway_s > time.time():
            return cached[1], cached[2]
        claims = self._decode(token)
        principal_id, grant = self._principal(claims)
        if len(self._cache) >= CACHE_SIZE:
            self._cache.clear()
        self._cache[token] = (float(claims["exp"]), principal_id, grant)
        return principal_id, grant

    def _signing_key(self, token: str):
        try:
            kid = jwt.get_unverified_header(token).get("kid")
        except jwt.PyJWTError as exc:
            raise UnauthorizedError(f"the bearer token is not valid: {exc}") from exc
        if self._client is not None:
            try:
                return self._client.get_signing_key(kid).key
            except jwt.PyJWKClientError as exc:
                raise UnauthorizedError(f"the bearer token is not valid: {exc}") from exc
        for key in self._jwks.keys:
            if key.key_id == kid:
                return key.key
        raise UnauthorizedError(f"the bearer token is not valid: no key with kid {kid!r} in the JWKS")

    def _decode(self, token: str) -> dict:
        settings = self.settings
        try:
            return jwt.decode(token, self._signing_key(token), algorithms=settings.algorithms,
                              audience=settings.audience, issuer=settings.issuer, leeway=settings.leeway_s,
                              options={"require": ["exp", "iss", "aud", settings.principal_claim]})
        except jwt.PyJWTError as exc:
            raise UnauthorizedError(f"the bearer token is not valid: {exc}") from exc

    def _principal(self, claims: dict) -> tuple[str, KeyGrant]:
        settings = self.settings
        principal_id = str(claims[settings.principal_claim])
        users = _strings(claims.get(settings.users_claim)) or [principal_id]
        apps = _strings(claims.get(settings.apps_claim)) or [WILDCARD]
        roles = [role for role in _strings(claims.get(settings.roles_claim)) if role in ALL_ROLES]
        return principal_id, KeyGrant(users=users, apps=apps, roles=roles)


def _strings(value) -> list[str]:
    """A claim as a list of strings (a space-separated string, as OAuth scopes are, or a list)."""
    if isinstance(value, str):
        return value.split()
    if isinstance(value, list):
        return [str(item) for item in value]
    return []
