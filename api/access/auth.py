"""Bearer auth: each key or token is a principal with the users and apps it may touch and the roles it holds.

Keys come two ways: an unnamed ``{secret: {users, apps}}`` entry (the secret is the mapping's key; it keeps
every role, as before roles existed; its principal id is ``key:`` and the start of its SHA-256), or a named
``{name: {sha256, users, apps, roles}}`` entry that holds only the secret's hash (``agentq keys create``).
Either is found by the SHA-256 of the presented secret. A bearer value shaped like a JWT is verified as an
OIDC token when ``api.access.oidc`` is configured. Which roles each route needs: ``api.access.roles``.

A key that may not touch a user's things gets 404 for them, exactly as if they did not exist, so ids never
leak across tenants. With no keys configured the API trusts only loopback clients.

The operations routes (``/health``, ``/metrics``, ``/docs`` with ``/openapi.json``) hold no one user's data, so
they follow their own rule (``check_ops_route``): each can be made public (no key needed when keys are
configured); otherwise it needs a key, and ``/metrics``, which counts across every user, a key that reaches
every user and app.
"""

from __future__ import annotations

import hashlib
import ipaddress
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from runtime.errors import NotFoundError, UsageError
from worker.records.audit import LOOPBACK

if TYPE_CHECKING:
    from fastapi import Request  # only annotated: the terminal's doors import this module without FastAPI

    from api.access.oidc import OidcVerifier

WILDCARD = "*"

Role = Literal["enqueue", "read", "answer", "operate"]
"""What a principal may do: enqueue (start work, write sessions), read, answer (respond/approve/reject),
operate (cancel, redeliver, ops routes, metrics)."""

ALL_ROLES: tuple[Role, ...] = ("enqueue", "read", "answer", "operate")

OPS_ROUTES = ("health", "metrics", "docs")
"""The operations routes that can be made public (``AGENTQ_API_PUBLIC_ROUTES``)."""

DEFAULT_PUBLIC_ROUTES = frozenset({"health"})


class KeyGrant(BaseModel):
    """What one bearer key may touch; ``"*"`` in a list means any."""

    model_config = ConfigDict(extra="forbid")

    users: list[str] = Field(min_length=1)
    apps: list[str] = Field(default_factory=lambda: [WILDCARD], min_length=1)
    roles: list[Role] = Field(default_factory=lambda: list(ALL_ROLES))
    """What the key may do (default: everything, as keys had before roles existed)."""
    sha256: str | None = Field(default=None, pattern="^[0-9a-f]{64}$")
    """A named key: the hex SHA-256 of its secret (the mapping's key is then its name, not the secret)."""

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
    """Validate a ``{key: {users, apps, roles?}}`` / ``{name: {sha256, users, apps, roles?}}`` mapping."""
    keys: dict[str, KeyGrant] = {}
    for key, grant in raw.items():
        if isinstance(grant, dict) and "sha256" in grant:  # a named key: no secret at rest
            try:
                keys[key] = KeyGrant.model_validate(grant)
            except ValidationError as exc:
                raise UsageError(f"API key {key!r}: {exc.errors()[0]['msg']}") from exc
            continue
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


class MissingRoleError(ForbiddenError):
    """Raised when the caller's principal lacks the role a route needs."""


class KeyTooNarrowError(ForbiddenError):
    """Raised when a key that does not reach every user and app asks for figures counted across all of them."""


@dataclass(frozen=True, kw_only=True)
class Caller:
    """Who is calling: their grant, or None when auth is off (loopback mode: everything allowed).

    ``principal_id`` names the caller in audit records and approval rules (a key's name, a token's subject;
    ``loopback`` when auth is off); ``client`` is the client address the request came from.
    """

    grant: KeyGrant | None
    principal_id: str = LOOPBACK
    client: str | None = None
    named: bool = False
    """True for a named key or a token (a principal with an identity); False for loopback and the unnamed
    ``{users, apps}`` keys (shared secrets: separation of duties applies to them only when a policy says so)."""

    @property
    def roles(self) -> tuple[Role, ...]:
        """The caller's roles (every role when auth is off)."""
        return ALL_ROLES if self.grant is None else tuple(self.grant.roles)

    def has_any(self, roles: frozenset[str]) -> bool:
        """True when the caller holds at least one of ``roles``."""
        return self.grant is None or any(role in roles for role in self.grant.roles)

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
    return "key:" + hash_secret(key)[:12]


def hash_secret(secret: str) -> str:
    """The hex SHA-256 of a key's secret (keys are long random strings, so a fast hash is enough)."""
    return hashlib.sha256(secret.encode()).hexdigest()


class KeyIndex(dict):
    """SHA-256 of a secret -> (principal id, grant, named): one hash and one lookup per request."""

    @classmethod
    def of(cls, keys: dict[str, KeyGrant]) -> KeyIndex:
        """The index of ``keys`` (built once per keys mapping and kept beside it)."""
        cached = _INDEXES.get(id(keys))
        if cached is not None and cached[0] is keys:
            return cached[1]
        index = cls()
        for key, grant in keys.items():
            if grant.sha256 is not None:
                index[grant.sha256] = (key, grant, True)
            else:
                index[hash_secret(key)] = (key_principal_id(key), grant, False)
        if len(_INDEXES) >= 64:  # settings are made once per process; tests make many
            _INDEXES.clear()
        _INDEXES[id(keys)] = (keys, index)
        return index


_INDEXES: dict[int, tuple[dict, KeyIndex]] = {}


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


def resolve_caller(request: Request, keys: dict[str, KeyGrant], oidc: OidcVerifier | None = None) -> Caller:
    """The caller of ``request``; raises UnauthorizedError / NotLoopbackError when refused.

    A bearer value that looks like a JWT is verified as an OIDC token when ``oidc`` is configured; anything
    else is looked up as a key by its SHA-256 (so the secret is compared in constant time, as a digest)."""
    if not keys and oidc is None:
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
    client = request.client.host if request.client else None
    if oidc is not None and token.count(".") == 2:
        principal_id, grant = oidc.verify(token)
        return Caller(grant=grant, principal_id=principal_id, client=client, named=True)
    digest = hash_secret(token)
    found = KeyIndex.of(keys).get(digest)
    # Looked up by digest: response timing can reveal nothing about a secret's prefix.
    if found is None:
        raise UnauthorizedError("the bearer key is not valid")
    principal_id, grant, named = found
    return Caller(grant=grant, principal_id=principal_id, client=client, named=named)


def parse_public_routes(raw: str, variable: str = "AGENTQ_API_PUBLIC_ROUTES") -> frozenset[str]:
    """Comma-separated names from ``OPS_ROUTES`` (``none``: no public route); UsageError naming an unknown one."""
    names = frozenset(part.strip().lower() for part in raw.split(",") if part.strip())
    if names == {"none"}:
        return frozenset()
    unknown = sorted(names - set(OPS_ROUTES))
    if unknown:
        raise UsageError(f"{variable} names {unknown[0]!r}: use any of {', '.join(OPS_ROUTES)} (or none)")
    return names


def check_ops_route(request: Request, keys: dict[str, KeyGrant], public: frozenset[str], route: str,
                    oidc: OidcVerifier | None = None) -> None:
    """Refuse ``request`` for the operations route ``route`` unless the settings allow it.

    With keys configured a public route needs none; otherwise any valid key may read ``health`` and ``docs``
    and only a key that reaches every user and app may read ``metrics``. With no keys configured every route,
    these included, serves loopback clients only.
    """
    if (keys or oidc is not None) and route in public:
        return
    caller = resolve_caller(request, keys, oidc)
    if route == "metrics" and not caller.has_any(frozenset({"operate"})):
        raise MissingRoleError(f"/metrics needs role 'operate'; principal {caller.principal_id!r} has "
                               f"{list(caller.roles)!r}")
    if route == "metrics" and caller.grant is not None and not caller.grant.reaches_everything:
        raise KeyTooNarrowError(
            "/metrics counts across every user and app: it needs a key with users ['*'] and apps ['*'] "
            "(or add metrics to AGENTQ_API_PUBLIC_ROUTES)"
        )


def principal_of(caller: Caller) -> str | None:
    """Who to record as having enqueued: the principal, or None when auth is off (no one to tell apart)."""
    return None if caller.grant is None else caller.principal_id
