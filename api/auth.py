"""Bearer-key auth: each key names the users and apps it may touch.

A key that may not touch a user's things gets 404 for them, exactly as if they did not exist, so ids never
leak across tenants. With no keys configured the API trusts only loopback clients.

The operations routes (``/health``, ``/metrics``, ``/docs`` with ``/openapi.json``) hold no one user's data, so
they follow their own rule (``check_ops_route``): each can be made public (no key needed when keys are
configured); otherwise it needs a key, and ``/metrics``, which counts across every user, a key that reaches
every user and app.
"""

from __future__ import annotations

import hmac
import ipaddress
from dataclasses import dataclass

from fastapi import Request
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from runtime.errors import NotFoundError, UsageError

WILDCARD = "*"

OPS_ROUTES = ("health", "metrics", "docs")
"""The operations routes that can be made public (``AGENTQ_API_PUBLIC_ROUTES``)."""

DEFAULT_PUBLIC_ROUTES = frozenset({"health"})


class KeyGrant(BaseModel):
    """What one bearer key may touch; ``"*"`` in a list means any."""

    model_config = ConfigDict(extra="forbid")

    users: list[str] = Field(min_length=1)
    apps: list[str] = Field(default_factory=lambda: [WILDCARD], min_length=1)

    def allows(self, app_name: str, user_id: str) -> bool:
        """True when this key may touch ``user_id``'s things in ``app_name``."""
        return self.allows_app(app_name) and (WILDCARD in self.users or user_id in self.users)

    def allows_app(self, app_name: str) -> bool:
        """True when this key may touch ``app_name`` at all."""
        return WILDCARD in self.apps or app_name in self.apps

    @property
    def reaches_everything(self) -> bool:
        """True when this key may touch every user of every app (what figures across all users need)."""
        return WILDCARD in self.users and WILDCARD in self.apps


def parse_keys(raw: dict) -> dict[str, KeyGrant]:
    """Validate a ``{key: {users, apps}}`` mapping."""
    keys: dict[str, KeyGrant] = {}
    for key, grant in raw.items():
        if not isinstance(key, str) or len(key) < 8:
            raise UsageError(f"API key {str(key)[:4]!r}... is too short: use at least 8 characters")
        try:
            keys[key] = KeyGrant.model_validate(grant)
        except ValidationError as exc:
            raise UsageError(f"API key {key[:4]!r}...: {exc.errors()[0]['msg']}") from exc
    return keys


class UnauthorizedError(UsageError):
    """Raised when a request carries no bearer key, or one that is not configured."""


class ForbiddenError(UsageError):
    """Raised when the caller may not use a route at all (403)."""


class NotLoopbackError(ForbiddenError):
    """Raised when no keys are configured and the client is not on the loopback interface."""


class KeyTooNarrowError(ForbiddenError):
    """Raised when a key that does not reach every user and app asks for figures counted across all of them."""


@dataclass(frozen=True, kw_only=True)
class Caller:
    """Who is calling: their grant, or None when auth is off (loopback mode: everything allowed).

    ``principal_id`` names the caller in audit records and approval rules (a key's name, a token's subject;
    ``loopback`` when auth is off); ``client`` is the client address the request came from.
    """

    grant: KeyGrant | None
    principal_id: str = "loopback"
    client: str | None = None

    def allows(self, app_name: str, user_id: str) -> bool:
        """True when the caller may touch ``user_id``'s things in ``app_name``."""
        return self.grant is None or self.grant.allows(app_name, user_id)

    def allows_app(self, app_name: str) -> bool:
        """True when the caller may see ``app_name``."""
        return self.grant is None or self.grant.allows_app(app_name)

    def check(self, app_name: str, user_id: str, not_found: NotFoundError) -> None:
        """Raise ``not_found`` (a 404, never a 403) when the caller may not touch this user's things."""
        if not self.allows(app_name, user_id):
            raise not_found


def key_principal_id(key: str) -> str:
    """A key's principal id when it has no name: ``key:`` and the start of its SHA-256 (never the key itself)."""
    import hashlib

    return "key:" + hashlib.sha256(key.encode()).hexdigest()[:12]


def is_loopback(host: str | None) -> bool:
    """True for 127.0.0.0/8, ::1 and in-process test transports."""
    if host is None:
        return False
    if host in ("localhost", "testclient"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def resolve_caller(request: Request, keys: dict[str, KeyGrant]) -> Caller:
    """The caller of ``request``; raises UnauthorizedError / NotLoopbackError when refused."""
    if not keys:
        host = request.client.host if request.client else None
        if not is_loopback(host):
            raise NotLoopbackError(
                f"no API keys are configured, so only loopback clients are served (client {host!r})"
            )
        return Caller(grant=None, client=host)
    header = request.headers.get("authorization", "")
    scheme, _, token = header.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise UnauthorizedError("missing 'Authorization: Bearer <key>' header")
    token = token.strip()
    for key, grant in keys.items():
        # Constant-time comparison so response timing does not reveal key prefixes.
        if hmac.compare_digest(key.encode(), token.encode()):
            return Caller(grant=grant, principal_id=key_principal_id(key),
                          client=request.client.host if request.client else None)
    raise UnauthorizedError("the bearer key is not valid")


def parse_public_routes(raw: str, variable: str = "AGENTQ_API_PUBLIC_ROUTES") -> frozenset[str]:
    """Comma-separated names from ``OPS_ROUTES`` (``none``: no public route); UsageError naming an unknown one."""
    names = frozenset(part.strip().lower() for part in raw.split(",") if part.strip())
    if names == {"none"}:
        return frozenset()
    unknown = sorted(names - set(OPS_ROUTES))
    if unknown:
        raise UsageError(f"{variable} names {unknown[0]!r}: use any of {', '.join(OPS_ROUTES)} (or none)")
    return names


def check_ops_route(request: Request, keys: dict[str, KeyGrant], public: frozenset[str], route: str) -> None:
    """Refuse ``request`` for the operations route ``route`` unless the settings allow it.

    With keys configured a public route needs none; otherwise any valid key may read ``health`` and ``docs``
    and only a key that reaches every user and app may read ``metrics``. With no keys configured every route,
    these included, serves loopback clients only.
    """
    if keys and route in public:
        return
    caller = resolve_caller(request, keys)
    if route == "metrics" and caller.grant is not None and not caller.grant.reaches_everything:
        raise KeyTooNarrowError(
            "/metrics counts across every user and app: it needs a key with users ['*'] and apps ['*'] "
            "(or add metrics to AGENTQ_API_PUBLIC_ROUTES)"
        )
