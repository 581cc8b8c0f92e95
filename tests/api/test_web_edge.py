"""The web edge (issue 18 item 5): Host allow-list against DNS rebinding, the /ui page headers, forwarded headers
believed only from configured proxies, and uvicorn started without its own proxy-header trust."""

from __future__ import annotations

import argparse
import signal

import httpx
import pytest

from api import ApiSettings, create_app
from api.access.auth import parse_keys
from api.access.web_edge import (
    UI_CSP,
    EdgeSettings,
    WebEdge,
    host_name,
    parse_allowed_hosts,
    parse_trusted_proxies,
)
from runtime.errors import UsageError

from .conftest import KEYS, make_client


def client_as(app, *, host: str = "127.0.0.1", base_url: str = "http://127.0.0.1:8000", headers=None):
    transport = httpx.ASGITransport(app=app, client=(host, 40000))
    return httpx.AsyncClient(transport=transport, base_url=base_url, headers=headers or {})


# --- Host allow-list (DNS rebinding) -------------------------------------------------------------------------


async def test_dns_rebinding_a_request_with_a_foreign_host_is_refused_in_no_key_mode(open_app):
    # A page on evil.example re-points its name at 127.0.0.1: the socket is loopback, the Host is not.
    async with client_as(open_app, headers={"Host": "evil.example:8000"}) as http:
        listing = await http.get("/list-apps")
        answer = await http.post("/invocations/e-x/function-responses", json={"function_responses": []})
    assert listing.status_code == 400
    assert listing.json()["error"] == "HostNotAllowedError"
    assert listing.json()["rule"] == "host-allow-list"
    assert "'evil.example'" in listing.json()["detail"] and "DNS rebinding" in listing.json()["detail"]
    assert answer.status_code == 400  # approvals included: refused before any route runs


@pytest.mark.parametrize("host", ["localhost:8000", "127.0.0.1:8000", "[::1]:8000", "LOCALHOST"])
async def test_dns_rebinding_localhost_names_are_served(open_app, host):
    async with client_as(open_app, headers={"Host": host}) as http:
        assert (await http.get("/list-apps")).status_code == 200


async def test_dns_rebinding_the_address_the_server_was_reached_on_is_served(open_app):
    # uvicorn puts the socket's local address in scope["server"]: a LAN bind is reachable by its own address
    async with client_as(open_app, base_url="http://192.0.2.10:8000") as http:
        assert (await http.get("/list-apps")).status_code == 200


async def test_dns_rebinding_agentq_allowed_hosts_extends_the_list(memory_services):
    app = create_app(ApiSettings(app_names=["weather"]), memory_services,
                     edge=EdgeSettings(allowed_hosts=parse_allowed_hosts("agentq.internal, Box.LAN")))
    async with client_as(app, headers={"Host": "box.lan:8000"}) as http:
        assert (await http.get("/list-apps")).status_code == 200
    async with client_as(app, headers={"Host": "evil.example"}) as http:
        assert (await http.get("/list-apps")).status_code == 400


async def test_dns_rebinding_check_is_off_with_keys_unless_hosts_are_configured(memory_services):
    keyed = ApiSettings(app_names=["weather"], keys=parse_keys(KEYS))
    async with make_client(create_app(keyed, memory_services), key="bob-key-000002") as http:
        assert (await http.get("/list-apps")).status_code == 200  # Host agentq.test: a page elsewhere has no key
    pinned = create_app(keyed, memory_services, edge=EdgeSettings(allowed_hosts=frozenset({"api.example"})))
    async with make_client(pinned, key="bob-key-000002") as http:
        assert (await http.get("/list-apps", headers={"Host": "other.example"})).status_code == 400
        assert (await http.get("/list-apps", headers={"Host": "api.example"})).status_code == 200


def test_dns_rebinding_host_names_and_settings_parse():
    assert [host_name(h) for h in ("A.example:80", "[::1]:8000", "::1", "box.")] == ["a.example", "::1", "::1", "box"]
    assert parse_allowed_hosts(" a.example ,, 10.0.0.5 ") == {"a.example", "10.0.0.5"}
    with pytest.raises(UsageError, match="AGENTQ_ALLOWED_HOSTS: 'http://a.example'"):
        parse_allowed_hosts("http://a.example")
    with pytest.raises(UsageError, match="AGENTQ_ALLOWED_HOSTS: 'a.example:8000'"):
        parse_allowed_hosts("a.example:8000")
    assert EdgeSettings.from_env({"AGENTQ_TRUSTED_PROXIES": "10.0.0.0/8"}).trusted_proxies == ["10.0.0.0/8"]


# --- the /ui page headers (clickjacking) ----------------------------------------------------------------------


@pytest.mark.parametrize("path", ["/ui", "/ui/static/app.js", "/ui/static/style.css", "/"])
async def test_ui_headers_forbid_framing_and_sniffing(open_app, path):
    async with client_as(open_app) as http:
        response = await http.get(path)
    assert response.status_code in (200, 307)
    assert response.headers["content-security-policy"] == UI_CSP
    assert "frame-ancestors 'none'" in response.headers["content-security-policy"]
    assert "script-src 'self';" in UI_CSP and "unsafe-inline" not in UI_CSP
    assert response.headers["x-frame-options"] == "DENY"
    assert response.headers["x-content-type-options"] == "nosniff"
    assert response.headers["referrer-policy"] == "no-referrer"


async def test_ui_page_has_no_inline_script_or_style_the_csp_would_block(open_app):
    async with client_as(open_app) as http:
        html = (await http.get("/ui")).text
    assert "<script>" not in html and "<style" not in html and " style=" not in html and " on" not in html.lower()


async def test_ui_headers_are_not_added_to_api_routes(open_app):
    async with client_as(open_app) as http:
        response = await http.get("/list-apps")
    assert "content-security-policy" not in response.headers


# --- forwarded headers ----------------------------------------------------------------------------------------


async def test_forwarded_headers_from_an_untrusted_peer_are_ignored(open_app):
    # A remote client claiming to be loopback through X-Forwarded-For is still the remote client.
    async with client_as(open_app, host="198.51.100.7", headers={"X-Forwarded-For": "127.0.0.1"}) as http:
        response = await http.get("/list-apps")
    assert response.status_code == 403
    assert "'198.51.100.7'" in response.json()["detail"]


async def test_forwarded_headers_ignored_from_untrusted_peer_scope_keeps_the_peer_and_scheme():
    seen = await _scope_through(EdgeSettings(), peer="127.0.0.1",
                                headers=[(b"x-forwarded-for", b"203.0.113.5"), (b"x-forwarded-proto", b"https")])
    assert (seen["client"], seen["scheme"]) == (("127.0.0.1", 40000), "http")


async def test_forwarded_headers_from_a_trusted_proxy_name_the_real_client(memory_services):
    app = create_app(ApiSettings(app_names=["weather"]), memory_services,
                     edge=EdgeSettings(trusted_proxies=parse_trusted_proxies("10.0.0.0/24")))
    # a same-host (or LAN) proxy forwarding a remote client: that client is not loopback
    async with client_as(app, host="10.0.0.2", headers={"X-Forwarded-For": "203.0.113.5"}) as http:
        remote = await http.get("/list-apps")
    async with client_as(app, host="10.0.0.2", headers={"X-Forwarded-For": "127.0.0.1"}) as http:
        local = await http.get("/list-apps")
    assert (remote.status_code, local.status_code) == (403, 200)
    assert "'203.0.113.5'" in remote.json()["detail"]
    seen = await _scope_through(EdgeSettings(trusted_proxies=["10.0.0.2"]), peer="10.0.0.2",
                                headers=[(b"x-forwarded-for", b"203.0.113.5"), (b"x-forwarded-proto", b"https")])
    assert (seen["client"][0], seen["scheme"]) == ("203.0.113.5", "https")


def test_forwarded_headers_trusted_proxies_must_be_addresses():
    with pytest.raises(UsageError, match="AGENTQ_TRUSTED_PROXIES: 'proxy.lan'"):
        parse_trusted_proxies("10.0.0.1, proxy.lan")


def test_forwarded_headers_uvicorn_starts_without_its_own_proxy_trust(monkeypatch):
    import uvicorn

    from agentq import serve_api

    captured = {}
    app = create_app(ApiSettings(app_names=["weather"]), None)
    monkeypatch.setattr(serve_api, "build", lambda args, url: app)
    monkeypatch.setattr(uvicorn.Server, "run", lambda self: captured.setdefault("config", self.config))
    handlers = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        serve_api._serve(argparse.Namespace(host="127.0.0.1", port=0, access_log=False), "redis://x", "warning")
    finally:
        for signum, handler in handlers.items():
            signal.signal(signum, handler)
    assert captured["config"].proxy_headers is False


async def _scope_through(settings: EdgeSettings, *, peer: str, headers: list) -> dict:
    seen: dict = {}

    async def inner(scope, receive, send):
        seen.update(scope)
        await send({"type": "http.response.start", "status": 204, "headers": []})
        await send({"type": "http.response.body", "body": b""})

    async def receive():
        return {"type": "http.request", "body": b""}

    async def send(message):
        pass

    scope = {"type": "http", "method": "GET", "path": "/x", "scheme": "http", "client": (peer, 40000),
             "server": ("127.0.0.1", 8000), "headers": [(b"host", b"127.0.0.1:8000"), *headers]}
    await WebEdge(inner, settings=settings, check_host=True)(scope, receive, send)
    return seen


def test_compose_flower_needs_its_basic_auth_login_and_listens_on_loopback_only():
    from pathlib import Path

    import yaml

    flower = yaml.safe_load((Path(__file__).resolve().parents[2] / "compose.yaml").read_text())["services"]["flower"]
    assert flower["environment"]["FLOWER_BASIC_AUTH"].startswith("${FLOWER_BASIC_AUTH:?")  # no default: never open
    assert all(str(port).startswith("127.0.0.1:") for port in flower.get("ports", []))
