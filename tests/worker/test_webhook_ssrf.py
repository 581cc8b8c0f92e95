"""The webhook SSRF rule: a per-enqueue webhook never reaches an address inside the deployment's network.

Traffic goes to loopback only: every other address class is answered by a stub resolver, and what is refused
is refused before any connection. Real Redis; the API in-process; the worker's WebhookDeliverer in-process.
"""

from __future__ import annotations

import ipaddress
import json
import threading
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from api import ApiSettings, create_app
from api.services import redis_services
from runtime.redis_store import keys
from tests.api.conftest import make_client
from tests.worker.test_webhooks import SECRET, Receiver
from worker.records.store import InvocationStore
from worker.webhooks import outbox as outbox
from worker.webhooks.config import WebhookSettings
from worker.webhooks.deliverer import WebhookDeliverer
from worker.webhooks.ssrf import WebhookGuard, address_class

REFUSED = {
    "127.0.0.1": "loopback", "127.8.0.1": "loopback", "::1": "loopback",
    "10.1.2.3": "private", "172.16.0.1": "private", "192.168.1.1": "private", "fd12::1": "private",
    "100.64.0.1": "private", "::ffff:10.0.0.1": "private",
    "169.254.1.1": "link-local", "fe80::1": "link-local",
    "224.0.0.1": "multicast", "ff02::1": "multicast",
    "0.0.0.0": "unspecified", "::": "unspecified",
    "169.254.169.254": "metadata", "fd00:ec2::254": "metadata", "100.100.100.200": "metadata",
    "240.0.0.1": "reserved",
}
PUBLIC = "93.184.216.34"


class StubResolver:
    """Answers from ``answers`` (host -> addresses), recording every question; nothing goes to a DNS server."""

    def __init__(self, answers: dict[str, list[str]]):
        self.answers = answers
        self.asked: list[str] = []

    async def __call__(self, host: str, port: int) -> list[str]:
        self.asked.append(host)
        if host not in self.answers:
            raise OSError(f"stub: {host} is not known")
        return list(self.answers[host])


@pytest.fixture
def receiver():
    made: list[Receiver] = []

    def make(script=None) -> Receiver:
        made.append(Receiver(script).start())
        return made[-1]

    yield make
    for one in made:
        one.stop()


def test_every_refused_address_class_is_named_and_a_public_address_passes():
    assert {address: address_class(ipaddress.ip_address(address)) for address in REFUSED} == REFUSED
    assert address_class(ipaddress.ip_address(PUBLIC)) is None
    assert address_class(ipaddress.ip_address("2606:4700::1111")) is None


async def _enqueue(http, session_id: str, webhook: str):
    return await http.post(f"/apps/weather/users/ann/sessions/{session_id}/invocations",
                           json={"newMessage": {"parts": [{"text": "hi"}]}, "webhook": webhook})


async def test_a_webhook_resolving_to_any_refused_class_is_refused_at_enqueue_naming_the_rule_and_class(redis_url):
    answers = {f"h{i}.example": [address] for i, address in enumerate(REFUSED)}
    answers["mixed.example"] = [PUBLIC, "10.0.0.7"]  # one bad answer is enough: a client may use any of them
    answers["public.example"] = [PUBLIC]
    guard = WebhookGuard(resolver=StubResolver(answers))
    backed = redis_services(redis_url)
    store = InvocationStore(redis_url)
    session = await store.create_session("weather", "ann")
    app = create_app(ApiSettings(app_names=["weather"], webhook_guard=guard), backed.services)
    async with make_client(app) as http:
        for i, (address, kind) in enumerate(REFUSED.items()):
            response = await _enqueue(http, session.id, f"https://h{i}.example/hook")
            assert response.status_code == 400, (address, response.text)
            assert response.json()["error"] == "WebhookTargetRefusedError"
            assert f"resolves to {ipaddress.ip_address(address)} ({kind} address)" in response.json()["detail"]
            assert "webhook SSRF rule" in response.json()["detail"]
        literal = await _enqueue(http, session.id, "http://[::1]:8080/hook")  # an address needs no resolver
        assert (literal.status_code, "(loopback address)" in literal.text) == (400, True)
        mixed = await _enqueue(http, session.id, "https://mixed.example/hook")
        assert (mixed.status_code, "10.0.0.7 (private address)" in mixed.text) == (400, True)
        unknown = await _enqueue(http, session.id, "https://nowhere.example/hook")
        assert (unknown.status_code, "'nowhere.example' does not resolve" in unknown.text) == (400, True)
        assert await store.redis.zcard(keys.user_invocations("weather", "ann")) == 0  # nothing was stored
        accepted = await _enqueue(http, session.id, "https://public.example/hook")
        assert accepted.status_code == 202, accepted.text
    await backed.aclose()
    await store.aclose()


async def test_the_operator_allow_list_and_configured_urls_let_internal_receivers_through(redis_url):
    resolver = StubResolver({"hooks.internal": ["10.20.0.5"], "other.internal": ["10.30.0.5"],
                             "billing.corp": ["192.168.7.7"]})
    settings = WebhookSettings(allow=("hooks.internal", "10.30.0.0/16"),
                               urls_by_app={"weather": "http://metrics.corp:9000/hook"})
    guard = settings.guard(resolver)
    await guard.check("http://hooks.internal/a")  # by host name
    await guard.check("http://other.internal/a")  # by network
    await guard.check("http://metrics.corp:9000/hook")  # the operator's own URL: trusted as it is
    with pytest.raises(Exception, match=r"192\.168\.7\.7 \(private address\)"):
        await guard.check("http://billing.corp/a")
    assert resolver.asked == ["other.internal", "billing.corp"]  # allowed names and trusted URLs are not resolved


async def _cancelled_with_webhook(store: InvocationStore, url: str) -> str:
    session = await store.create_session("weather", "u-" + uuid.uuid4().hex[:8])
    invocation_id = await store.enqueue("weather", session.user_id, session.id, "hi", None, None, webhook=url)
    await store.cancel(invocation_id, "done")
    return invocation_id


def _settings(**overrides) -> WebhookSettings:
    return WebhookSettings(**{"secret": SECRET, "backoff_s": 0.02, "backoff_max_s": 0.05, "timeout_s": 2.0,
                              "retry_for_s": 30.0, **overrides})


async def test_a_dns_answer_that_turns_private_after_enqueue_is_refused_at_delivery_and_never_connected(
        redis_url, receiver):
    hook = receiver()  # listening on loopback: the address a rebinding DNS answer points the delivery to
    resolver = StubResolver({"rebind.example": [PUBLIC]})
    guard = WebhookGuard(resolver=resolver)
    url = f"http://rebind.example:{hook.port}/hook"
    await guard.check(url)  # enqueue time: public, accepted
    store = InvocationStore(redis_url)
    invocation_id = await _cancelled_with_webhook(store, url)
    resolver.answers["rebind.example"] = ["127.0.0.1"]  # delivery time: the name now points inside
    deliverer = WebhookDeliverer(store, _settings(), resolver=resolver)
    assert await deliverer.deliver_due() == 1
    assert hook.requests == []  # refused before any connection
    letters, _ = await outbox.dead_letters(store.redis, limit=10)
    assert [(d["inv"], d["attempts"]) for d in letters] == [(invocation_id, 1)]  # dead at once, not retried
    assert "resolves to 127.0.0.1 (loopback address)" in letters[0]["last_error"]
    assert resolver.asked == ["rebind.example", "rebind.example"]
    await deliverer.aclose()
    await store.aclose()


async def test_delivery_connects_to_the_checked_address_keeping_the_host_header_and_resolving_once(
        redis_url, receiver):
    hook = receiver()
    resolver = StubResolver({"hooks.test": ["127.0.0.1"]})  # a name no real DNS answers: only the pin reaches it
    store = InvocationStore(redis_url)
    invocation_id = await _cancelled_with_webhook(store, f"http://hooks.test:{hook.port}/hook?x=1")
    deliverer = WebhookDeliverer(store, _settings(allow=("127.0.0.1/32",)), resolver=resolver)
    assert await deliverer.deliver_due() == 1
    assert (await outbox.stats(store.redis))["delivered"] == 1.0
    [(headers, body)] = hook.requests
    assert (headers["host"], json.loads(body)["data"]["invocationId"]) == (f"hooks.test:{hook.port}", invocation_id)
    assert resolver.asked == ["hooks.test"]
    await deliverer.aclose()
    await store.aclose()


async def test_a_redirect_is_not_followed_and_counts_as_a_failed_attempt(redis_url, receiver):
    target = receiver()

    class Redirect(BaseHTTPRequestHandler):
        def do_POST(self):  # noqa: N802 (http.server's naming)
            self.send_response(307)
            self.send_header("location", target.url)
            self.send_header("content-length", "0")
            self.end_headers()

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Redirect)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        store = InvocationStore(redis_url)
        await _cancelled_with_webhook(store, f"http://127.0.0.1:{server.server_address[1]}/hook")
        deliverer = WebhookDeliverer(store, _settings(allow=("127.0.0.1",)))
        await deliverer.deliver_due()
        [entry] = [json.loads(raw) for raw in (await store.redis.hgetall(keys.webhook_outbox())).values()]
        assert (entry["attempts"], entry["last_error"]) == (1, "HTTP 307")
        assert target.requests == []
        await deliverer.aclose()
        await store.aclose()
    finally:
        server.shutdown()
        server.server_close()


async def test_an_operator_configured_url_on_loopback_is_trusted_at_delivery(redis_url, receiver):
    hook = receiver()
    store = InvocationStore(redis_url)
    await _cancelled_with_webhook(store, hook.url)
    deliverer = WebhookDeliverer(store, _settings(urls_by_app={"weather": hook.url}))  # no allow-list
    await deliverer.deliver_due()
    assert (len(hook.requests), (await outbox.stats(store.redis))["delivered"]) == (1, 1.0)
    await deliverer.aclose()
    await store.aclose()
