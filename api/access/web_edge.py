"""The web edge: what every request passes before the routes see it (issue 18 item 5).

- **Forwarded headers** (``X-Forwarded-For``, ``X-Forwarded-Proto``) are believed only from the proxies named in
  ``AGENTQ_TRUSTED_PROXIES`` (addresses or networks; default none). From any other peer they are ignored, so a
  client cannot claim to be loopback and a same-host proxy is seen as the proxy it is. uvicorn's own proxy-header
  handling is off (``agentq api`` starts it with ``proxy_headers=False``); this middleware does it instead.
- **Host allow-list**: with no API keys (loopback mode) a request whose ``Host`` is not the address the server
  was reached on, a localhost name, or a name in ``AGENTQ_ALLOWED_HOSTS`` is refused (400 naming the rule).
  That is what stops DNS rebinding: a web page on ``evil.example`` whose name is re-pointed at 127.0.0.1 reaches
  the port, but its requests say ``Host: evil.example``. With keys configured the list applies only when
  ``AGENTQ_ALLOWED_HOSTS`` is set (a browser page on another origin has no key to send).
- **Page headers** on ``/`` and ``/ui``: a CSP that allows only the page's own files and no framing
  (``frame-ancestors 'none'``), ``X-Frame-Options: DENY``, ``X-Content-Type-Options: nosniff`` and
  ``Referrer-Policy: no-referrer``, so the Approve button cannot be clickjacked.
"""

from __future__ import annotations

import ipaddress
import json
import os
from dataclasses import dataclass, field
from typing import Any

from runtime.errors import UsageError

LOCAL_HOST_NAMES = frozenset({"localhost", "127.0.0.1", "::1", "localhost.localdomain"})
"""Names a local client may always use in ``Host`` (besides the address the server was reached on)."""

UI_CSP = ("default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
          "object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'")
"""The /ui page loads only its own files (no inline script or style) and may not be framed."""

UI_HEADERS = [
    (b"content-security-policy", UI_CSP.encode()),
    (b"x-frame-options", b"DENY"),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
]

HOST_RULE = "host-allow-list"


@dataclass(kw_only=True)
class EdgeSettings:
    """Who the API believes about forwarding, and which Host names it answers."""

    allowed_hosts: frozenset[str] = frozenset()
    """Extra names (or addresses) accepted in ``Host`` besides the localhost names and the address the server
    was reached on (``AGENTQ_ALLOWED_HOSTS``, comma-separated; ``*``: any, which turns the check off)."""

    trusted_proxies: list[str] = field(default_factory=list)
    """Peers whose ``X-Forwarded-For``/``-Proto`` are believed (``AGENTQ_TRUSTED_PROXIES``: addresses or CIDR
    networks, comma-separated). Empty: forwarded headers are ignored from everyone."""

    @classmethod
    def from_env(cls, environ: Any = None) -> EdgeSettings:
        """``AGENTQ_ALLOWED_HOSTS`` and ``AGENTQ_TRUSTED_PROXIES``; UsageError naming a bad entry."""
        env = os.environ if environ is None else environ
        return cls(allowed_hosts=parse_allowed_hosts(env.get("AGENTQ_ALLOWED_HOSTS", "")),
                   trusted_proxies=parse_trusted_proxies(env.get("AGENTQ_TRUSTED_PROXIES", "")))


def parse_allowed_hosts(value: str) -> frozenset[str]:
    """Comma-separated host names or addresses (no scheme, no port), or ``*``."""
    hosts = set()
    for raw in value.split(","):
        name = raw.strip().lower()
        if not name:
            continue
        if "/" in name or "://" in name or (":" in name and not _is_ip(name)):
            raise UsageError(f"AGENTQ_ALLOWED_HOSTS: {raw.strip()!r} is not a host name or address "
                             "(no scheme, port or path)")
        hosts.add(name)
    return frozenset(hosts)


def parse_trusted_proxies(value: str) -> list[str]:
    """Comma-separated addresses or CIDR networks of the proxies in front of the API."""
    proxies = []
    for raw in value.split(","):
        entry = raw.strip()
        if not entry:
            continue
        try:
            ipaddress.ip_network(entry, strict=False)
        except ValueError:
            raise UsageError(f"AGENTQ_TRUSTED_PROXIES: {entry!r} is not an IP address or network") from None
        proxies.append(entry)
    return proxies


def _is_ip(value: str) -> bool:
    try:
        ipaddress.ip_address(value)
    except ValueError:
        return False
    return True


def host_name(header: str) -> str:
    """The name in a ``Host`` header, lower case, without its port (``[::1]:8000`` -> ``::1``)."""
    header = header.strip().lower()
    if header.startswith("["):
        return header[1:].partition("]")[0]
    if header.count(":") == 1:
        return header.partition(":")[0]
    return header.rstrip(".")


class WebEdge:
    """ASGI middleware: forwarded headers from trusted proxies only, the Host allow-list, the page headers."""

    def __init__(self, app: Any, *, settings: EdgeSettings, check_host: bool) -> None:
        self.app = app
        self.settings = settings
        self.check_host = check_host and "*" not in settings.allowed_hosts
        self.allowed = LOCAL_HOST_NAMES | settings.allowed_hosts
        self.inner: Any = self._edge
        if settings.trusted_proxies:
            from uvicorn.middleware.proxy_headers import ProxyHeadersMiddleware

            self.inner = ProxyHeadersMiddleware(self._edge, trusted_hosts=settings.trusted_proxies)

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        await self.inner(scope, receive, send)

    async def _edge(self, scope: dict, receive: Any, send: Any) -> None:
        if self.check_host:
            refusal = self._host_refusal(scope)
            if refusal is not None:
                await _refuse(scope, send, refusal)
                return
        path = scope.get("path", "")
        if scope["type"] == "http" and (path in ("/", "/ui") or path.startswith("/ui/")):
            await self.app(scope, receive, _with_headers(send, UI_HEADERS))
            return
        await self.app(scope, receive, send)

    def _host_refusal(self, scope: dict) -> str | None:
        header = next((value for name, value in scope.get("headers", ()) if name == b"host"), None)
        if header is None:
            return None  # HTTP/1.0 without Host: no browser sends that, so no rebinding risk
        name = host_name(header.decode("latin-1"))
        if name in self.allowed:
            return None
        server = scope.get("server")
        if server and name == str(server[0]).lower():
            return None
        return (f"Host {name!r} is not allowed ({HOST_RULE}): with no API keys only the server's own address, "
                f"localhost names and AGENTQ_ALLOWED_HOSTS are served, so a web page cannot reach the API by "
                f"DNS rebinding")


def _with_headers(send: Any, headers: list[tuple[bytes, bytes]]) -> Any:
    async def sending(message: dict) -> None:
        if message["type"] == "http.response.start":
            names = {name for name, _ in headers}
            message = {**message, "headers": [*(h for h in message.get("headers", []) if h[0].lower() not in names),
                                              *headers]}
        await send(message)

    return sending


async def _refuse(scope: dict, send: Any, detail: str) -> None:
    if scope["type"] == "websocket":
        await send({"type": "websocket.close", "code": 1008})
        return
    body = json.dumps({"error": "HostNotAllowedError", "detail": detail, "rule": HOST_RULE}).encode()
    await send({"type": "http.response.start", "status": 400,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})
