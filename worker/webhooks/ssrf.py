"""WebhookGuard: the SSRF rule. A webhook is never sent to an address inside the deployment's own network.

A per-enqueue ``webhook`` URL is resolved and refused when any address it resolves to is loopback, private,
link-local, multicast, unspecified, reserved or a cloud metadata endpoint: once at enqueue (``check``, the API
answers 400 naming the rule and the address class) and again at delivery (``pin``), whose checked address is
the one connected to (no second resolution a rebinding DNS server could answer differently; the URL's host
stays in the ``Host`` header and the TLS SNI). Receivers inside the network are let through by the operator:
``AGENTQ_WEBHOOK_ALLOW`` (host names, addresses or networks), and the per-app ``AGENTQ_WEBHOOKS`` URLs are
trusted as they are. The resolver is injectable so tests can answer any address without sending traffic there.
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from urllib.parse import urlsplit, urlunsplit

from runtime.errors import UsageError

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
Resolver = Callable[[str, int], Awaitable[list[str]]]
"""(host, port) -> the addresses it resolves to (OSError when it does not resolve)."""

RULE = "webhook SSRF rule"
ALLOW_VARIABLE = "AGENTQ_WEBHOOK_ALLOW"
RESOLVE_TIMEOUT_S = 5.0

METADATA = frozenset(ipaddress.ip_address(a) for a in (
    "169.254.169.254",  # AWS, GCP, Azure, OpenStack, DigitalOcean ...
    "169.254.170.2",  # AWS ECS task metadata
    "fd00:ec2::254",  # AWS IMDS over IPv6
    "100.100.100.200",  # Alibaba Cloud
    "192.0.0.192",  # Oracle Cloud
))
SHARED = ipaddress.ip_network("100.64.0.0/10")  # carrier-grade NAT: not global, not "private" to ipaddress


class WebhookTargetRefusedError(UsageError):
    """Raised when a webhook URL resolves to an address the SSRF rule refuses (or does not resolve at all)."""


class WebhookHostUnresolvedError(WebhookTargetRefusedError):
    """Raised when a webhook URL's host does not resolve (at delivery: tried again later, DNS may recover)."""


def address_class(address: IPAddress) -> str | None:
    """Why ``address`` is refused (``metadata``, ``loopback``, ``unspecified``, ``link-local``, ``multicast``,
    ``private``, ``reserved``), or None for a public address."""
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped  # ::ffff:127.0.0.1 is 127.0.0.1
    checks = (("metadata", address in METADATA), ("loopback", address.is_loopback),
              ("unspecified", address.is_unspecified), ("link-local", address.is_link_local),
              ("multicast", address.is_multicast), ("reserved", address.is_reserved),
              ("private", address.is_private or (address.version == 4 and address in SHARED)),
              ("reserved", not address.is_global))  # documentation, benchmarking and other special ranges
    return next((name for name, hit in checks if hit), None)


async def system_resolver(host: str, port: int) -> list[str]:
    """The addresses ``host`` resolves to, by the operating system's resolver (off the event loop)."""
    infos = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return list(dict.fromkeys(str(info[4][0]) for info in infos))


def parse_allow(raw: str | Iterable[str], variable: str = ALLOW_VARIABLE) -> tuple[str, ...]:
    """Comma-separated host names, addresses or networks (``10.0.0.0/8``); UsageError naming a bad network."""
    items = [part.strip().lower() for part in (raw.split(",") if isinstance(raw, str) else raw) if part.strip()]
    for item in items:
        if "/" in item or _is_address(item):
            try:
                ipaddress.ip_network(item, strict=False)
            except ValueError:
                raise UsageError(f"{variable}: {item!r} is not an address or network") from None
    return tuple(items)


@dataclass(frozen=True, kw_only=True)
class PinnedTarget:
    """Where one delivery connects: ``url`` with its host replaced by the checked address (None: as given),
    and the original host for the ``Host`` header and TLS SNI."""

    url: str
    host: str
    address: str | None = None

    @property
    def connect_url(self) -> str:
        """The URL to connect to: the checked address instead of the host name (none when trusted)."""
        if self.address is None:
            return self.url
        parts = urlsplit(self.url)
        literal = f"[{self.address}]" if ":" in self.address else self.address
        netloc = literal if parts.port is None else f"{literal}:{parts.port}"
        return urlunsplit(parts._replace(netloc=netloc))

    @property
    def host_header(self) -> str:
        """The ``Host`` header the receiver expects (the URL's host and port, credentials dropped)."""
        return urlsplit(self.url).netloc.rpartition("@")[2]


@dataclass(frozen=True, kw_only=True)
class WebhookGuard:
    """The SSRF rule with the operator's exceptions; ``resolver`` answers DNS (tests stub it)."""

    allow: tuple[str, ...] = ()
    """Host names, addresses and networks (CIDR) that are let through (internal receivers)."""
    trusted_urls: frozenset[str] = frozenset()
    """URLs the operator configured (``AGENTQ_WEBHOOKS``): sent to as they are."""
    resolver: Resolver = field(default=system_resolver, compare=False)

    async def check(self, url: str) -> None:
        """Refuse ``url`` (WebhookTargetRefusedError naming the rule and the address class) unless allowed."""
        await self.pin(url)

    async def pin(self, url: str) -> PinnedTarget:
        """The checked address to connect to for ``url``; WebhookTargetRefusedError when the rule refuses it."""
        parts = urlsplit(url)
        host = (parts.hostname or "").lower()
        if url in self.trusted_urls or host in self.allow:
            return PinnedTarget(url=url, host=host)
        port = parts.port or (443 if parts.scheme == "https" else 80)
        if _is_address(host):
            found = [host]
        else:
            try:
                async with asyncio.timeout(RESOLVE_TIMEOUT_S):
                    found = await self.resolver(host, port)
            except (OSError, TimeoutError) as exc:
                raise WebhookHostUnresolvedError(
                    f"webhook {url!r}: host {host!r} does not resolve ({exc or type(exc).__name__})") from None
        addresses = [ipaddress.ip_address(a.split("%")[0]) for a in found]
        if not addresses:
            raise WebhookTargetRefusedError(f"webhook {url!r}: host {host!r} resolves to no address")
        for address in addresses:  # every answer must pass: a client may connect to any of them
            kind = address_class(address)
            if kind is not None and not self._allowed(address):
                raise WebhookTargetRefusedError(
                    f"webhook {url!r} refused by the {RULE}: {host!r} resolves to {address} ({kind} address); "
                    f"an operator can allow internal receivers with {ALLOW_VARIABLE}")
        return PinnedTarget(url=url, host=host, address=str(addresses[0]))

    def _allowed(self, address: IPAddress) -> bool:
        for item in self.allow:
            if ("/" in item or _is_address(item)) and address in ipaddress.ip_network(item, strict=False):
                return True
        return False


def _is_address(text: str) -> bool:
    try:
        ipaddress.ip_address(text.strip("[]"))
    except ValueError:
        return False
    return True
