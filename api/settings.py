"""ApiSettings: everything the API process is configured with, read once at the process edge."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from api.access.approval_policy import ApprovalPolicies
from api.access.auth import DEFAULT_PUBLIC_ROUTES, KeyGrant, parse_keys
from api.access.http_limits import ConnectionLimits
from api.access.rate_limits import RateLimits
from api.served_apps import ServedApps
from runtime.errors import UsageError
from worker.webhooks.ssrf import WebhookGuard

if TYPE_CHECKING:  # PyJWT and cryptography load only where OIDC is configured (load_oidc)
    from api.access.oidc import OidcVerifier

DEFAULT_MAX_BODY_BYTES = 1_000_000


@dataclass(kw_only=True)
class ApiSettings:
    """What the API serves, who may call it and how much it accepts."""

    app_names: list[str] = field(default_factory=list)
    """The apps given to serve (``--app``); an app outside ``served`` is a 404."""

    follow_workers: bool = False
    """Also serve every app an alive worker announces (``agentq api`` does); False with no ``app_names``: any
    app is accepted (an in-process API)."""

    served: ServedApps | None = None
    """The apps served now (``api.served_apps``); built from ``app_names`` and ``follow_workers`` when None."""

    keys: dict[str, KeyGrant] = field(default_factory=dict)
    """Bearer key (or a named key's name) -> what it may touch and do. Empty, and no ``oidc``: no auth,
    loopback clients only."""

    oidc: OidcVerifier | None = None
    """Verifies OIDC/JWT bearer tokens (``AGENTQ_OIDC_*``); None: tokens are not accepted."""

    approval: ApprovalPolicies = field(default_factory=ApprovalPolicies)
    """Who may answer which app's and tool's calls (``AGENTQ_APPROVAL_POLICY``; ``api.access.approval_policy``)."""

    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES
    """Requests with a larger body get 413 before any of it is parsed."""

    run_timeout_s: float = 600.0
    """How long POST /run waits for its invocation to settle before answering 504."""

    sse_keepalive_s: float = 15.0
    """An SSE comment line is sent this often so proxies keep idle streams open."""

    app_infos: dict[str, dict] = field(default_factory=dict)
    """ADK's AppInfo JSON of each app loaded as ``module:attr`` (``GET /apps/{app}/app-info``; ``api.views.app_info``)."""

    cors_origins: list[str] = field(default_factory=list)
    """Origins allowed to call the API from a browser (``AGENTQ_CORS_ORIGINS``, comma-separated; ``*`` any).
    Empty: no CORS headers at all (same-origin only), the default."""

    dev_ui_dir: str | None = None
    """A built web UI (google-adk's dev UI) to serve at /dev-ui/ on the API's origin; None: no UI."""

    public_routes: frozenset[str] = DEFAULT_PUBLIC_ROUTES
    """Operations routes (health, metrics, docs) served without a key when keys are configured."""

    connection: ConnectionLimits = field(default_factory=ConnectionLimits)
    """How long and how much the server waits for from a slow or oversized client."""

    rate_limits: RateLimits = field(default_factory=RateLimits)
    """Enqueue rate and invocations in flight per principal and per app/user (``AGENTQ_RATE_*``; off by default)."""

    webhook_guard: WebhookGuard = field(default_factory=WebhookGuard)
    """The SSRF rule a per-enqueue ``webhook`` must pass (``AGENTQ_WEBHOOK_ALLOW``, ``AGENTQ_WEBHOOKS`` trusted)."""

    def __post_init__(self) -> None:
        if self.served is None:
            self.served = ServedApps(self.app_names, follow_workers=self.follow_workers)

    def policies(self) -> ApprovalPolicies:
        """The approval rules in force: ``approval`` over what the served apps' tools declare."""
        return self.served.policies(self.approval)

    @property
    def auth_enabled(self) -> bool:
        """True when bearer keys or OIDC tokens are configured; otherwise only loopback clients are served."""
        return bool(self.keys) or self.oidc is not None


def load_keys(*, keys_json: str | None = None, keys_file: str | None = None) -> dict[str, KeyGrant]:
    """Keys from a JSON string (``AGENTQ_API_KEYS``) and/or a JSON file (``AGENTQ_API_KEYS_FILE``)."""
    raw: dict = {}
    if keys_file:
        path = Path(keys_file)
        if not path.is_file():
            raise UsageError(f"API keys file {str(path)!r} does not exist")
        raw.update(_parse_json(path.read_text(), f"API keys file {str(path)!r}"))
    if keys_json:
        raw.update(_parse_json(keys_json, "AGENTQ_API_KEYS"))
    return parse_keys(raw)


def _parse_json(text: str, where: str) -> dict:
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise UsageError(f"{where} is not valid JSON: {exc}") from exc
    if not isinstance(value, dict):
        raise UsageError(f"{where} must be a JSON object of key -> {{users, apps}}")
    return value


def parse_cors_origins(value: str) -> list[str]:
    """``AGENTQ_CORS_ORIGINS``: comma-separated ``http(s)://host[:port]`` origins, or ``*``; empty: CORS off."""
    origins = [origin.strip().rstrip("/") for origin in value.split(",") if origin.strip()]
    for origin in origins:
        if origin != "*" and not (origin.startswith(("http://", "https://")) and "/" not in origin.split("://")[1]):
            raise UsageError(f"AGENTQ_CORS_ORIGINS: {origin!r} is not '*' or an origin like 'https://host:8080'")
    return origins


def load_oidc(env: dict[str, str] | Any) -> OidcVerifier | None:
    """The OIDC token verifier from ``AGENTQ_OIDC_*`` (``api.access.oidc.OidcSettings.from_env``), or None."""
    from api.access.oidc import OidcSettings, OidcVerifier

    oidc = OidcSettings.from_env(dict(env))
    return OidcVerifier(oidc) if oidc is not None else None


def load_approval_policy(env: dict[str, str] | Any) -> ApprovalPolicies:
    """The approval rules from ``AGENTQ_APPROVAL_POLICY`` (JSON) or ``AGENTQ_APPROVAL_POLICY_FILE``."""
    if env.get("AGENTQ_APPROVAL_POLICY"):
        return ApprovalPolicies.parse(env["AGENTQ_APPROVAL_POLICY"])
    if env.get("AGENTQ_APPROVAL_POLICY_FILE"):
        path = Path(env["AGENTQ_APPROVAL_POLICY_FILE"])
        if not path.is_file():
            raise UsageError(f"approval policy file {str(path)!r} does not exist")
        return ApprovalPolicies.parse(path.read_text(), f"approval policy file {str(path)!r}")
    return ApprovalPolicies()
