"""WebhookSettings: where invocations' notifications go, how they are signed, and how long they are retried.

Read once at a process edge (``WebhookSettings.from_env``). The processes that enqueue (API, Python clients)
stamp each new record with its webhook URL: the ``webhook`` given at enqueue, else its app's entry of
``AGENTQ_WEBHOOKS``. The workers deliver, so they need the secret and the retry settings. Nonsense (a URL that
is not http(s), a malformed duration) is refused at start with a UsageError naming the variable. Webhooks are
signed by default: a worker refuses to start without ``AGENTQ_WEBHOOK_SECRET`` (``require_signing``) unless
``AGENTQ_WEBHOOKS_UNSIGNED=1`` says unsigned ones are wanted. ``AGENTQ_WEBHOOK_ALLOW`` lists the internal
receivers the SSRF rule lets through (``worker.webhooks.ssrf``; give it to the API and the workers alike).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from urllib.parse import urlsplit

from runtime.errors import UsageError
from worker.config.env_values import duration, per_app, set_variables
from worker.webhooks.signing import secret_key
from worker.webhooks.ssrf import WebhookGuard, parse_allow

MAX_URL_LENGTH = 2048

ENV_NAMES = {
    "urls_by_app": "AGENTQ_WEBHOOKS",
    "secret": "AGENTQ_WEBHOOK_SECRET",
    "timeout_s": "AGENTQ_WEBHOOK_TIMEOUT",
    "retry_for_s": "AGENTQ_WEBHOOK_RETRY_FOR",
    "backoff_s": "AGENTQ_WEBHOOK_BACKOFF",
    "backoff_max_s": "AGENTQ_WEBHOOK_BACKOFF_MAX",
    "poll_s": "AGENTQ_WEBHOOK_POLL",
    "public_url": "AGENTQ_PUBLIC_URL",
    "allow": "AGENTQ_WEBHOOK_ALLOW",
    "unsigned": "AGENTQ_WEBHOOKS_UNSIGNED",
}
"""The environment variable behind each field (named in every refusal)."""


def check_url(url: str, what: str) -> str:
    """``url`` if it is an absolute http(s) URL with a host; UsageError naming ``what`` otherwise."""
    if not isinstance(url, str) or not url or len(url) > MAX_URL_LENGTH or any(c.isspace() for c in url):
        raise UsageError(f"{what} must be an http:// or https:// URL of at most {MAX_URL_LENGTH} characters "
                         f"without spaces, got {url!r}")
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 (raises ValueError on a malformed port)
    except ValueError as exc:
        raise UsageError(f"{what} is not a valid URL ({exc}): {url!r}") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise UsageError(f"{what} must be an http:// or https:// URL with a host, got {url!r}")
    return url


@dataclass(frozen=True, kw_only=True)
class WebhookSettings:
    """Per-app webhook URLs (enqueuers), the signing secret and the retry schedule (workers)."""

    urls_by_app: dict[str, str] = field(default_factory=dict)
    """App name -> URL notified of that app's invocations enqueued without a ``webhook`` of their own."""
    secret: str | None = None
    """``whsec_<base64>`` (Standard Webhooks) or any other text used as raw key bytes; None: sent unsigned."""
    timeout_s: float = 10.0
    """One POST's whole time limit; a slower receiver counts as failed and is tried again."""
    retry_for_s: float = 24 * 3600.0
    """How long after the transition a notification is retried before it goes to the dead-letter list."""
    backoff_s: float = 1.0
    """The first retry's delay bound; it doubles per attempt (full jitter: a random delay up to the bound)."""
    backoff_max_s: float = 600.0
    """The largest delay bound between two attempts."""
    poll_s: float = 0.5
    """How often each worker process looks for due deliveries."""
    public_url: str | None = None
    """The API's base URL, for the absolute ``links`` in the payload (None: links are paths)."""
    allow: tuple[str, ...] = ()
    """Host names, addresses and networks a per-enqueue webhook may reach despite the SSRF rule."""
    unsigned: bool = False
    """True: the operator wants webhooks sent without a signature (a worker may start without a secret)."""

    def __post_init__(self) -> None:
        for app, url in self.urls_by_app.items():
            check_url(url, f"{ENV_NAMES['urls_by_app']} entry for app {app!r}")
        if self.secret is not None:
            secret_key(self.secret)  # a whsec_ secret must decode
        if self.public_url is not None:
            check_url(self.public_url, ENV_NAMES["public_url"])
        for name in ("timeout_s", "retry_for_s", "backoff_s", "backoff_max_s", "poll_s"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int | float) or not value > 0:
                raise UsageError(f"{ENV_NAMES[name]} ({name}) must be a duration above 0 seconds, got {value!r}")

    def guard(self, resolver=None) -> WebhookGuard:
        """The SSRF rule with this deployment's exceptions (the allow-list; the per-app URLs are trusted)."""
        extra = {} if resolver is None else {"resolver": resolver}
        return WebhookGuard(allow=parse_allow(self.allow), trusted_urls=frozenset(self.urls_by_app.values()),
                            **extra)

    def require_signing(self) -> None:
        """UsageError (a worker does not start) when the operator configured webhooks (``AGENTQ_WEBHOOKS``) but
        no secret, and unsigned webhooks were not asked for. Without configured webhooks the worker starts, and a
        per-enqueue webhook is still never sent unsigned (``unsigned_refusal``)."""
        if self.urls_by_app and self.secret is None and not self.unsigned:
            raise UsageError(
                f"{ENV_NAMES['secret']} is not set, so webhooks would go out unsigned: set it (a whsec_<base64> "
                f"secret, e.g. whsec_$(openssl rand -base64 24)) or set {ENV_NAMES['unsigned']}=1 to send them "
                "without a signature")

    def unsigned_refusal(self) -> str | None:
        """Why a webhook may not be sent with these settings (no secret, unsigned not asked for); None when it may."""
        if self.secret is None and not self.unsigned:
            return (f"not sent: {ENV_NAMES['secret']} is not set and {ENV_NAMES['unsigned']} is not 1, so it would go "
                    "out unsigned")
        return None

    def url_for(self, app: str, webhook: str | None = None) -> str | None:
        """The URL to notify about an invocation of ``app``: its own ``webhook`` (checked), else the app's."""
        if webhook is not None:
            return check_url(webhook, "webhook")
        return self.urls_by_app.get(app)

    @classmethod
    def from_env(cls, environ: dict[str, str] | None = None) -> WebhookSettings:
        """The settings from ``AGENTQ_WEBHOOK*`` and ``AGENTQ_PUBLIC_URL`` (unset ones keep their defaults)."""
        values: dict = {}
        for name, variable, raw in set_variables(ENV_NAMES, environ):
            if name == "urls_by_app":
                values[name] = per_app(variable, raw, lambda where, url: check_url(url, where), example="app=url")
            elif name in ("secret", "public_url"):
                values[name] = raw.strip()
            elif name == "allow":
                values[name] = parse_allow(raw, variable)
            elif name == "unsigned":
                values[name] = _flag(variable, raw)
            else:
                values[name] = duration(variable, raw, optional=False)
        return cls(**values)


def _flag(variable: str, raw: str) -> bool:
    value = raw.strip().lower()
    if value not in ("1", "true", "yes", "0", "false", "no"):
        raise UsageError(f"{variable} must be 1 or 0 (true/false), got {raw!r}")
    return value in ("1", "true", "yes")
