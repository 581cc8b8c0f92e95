"""Webhooks: signed notifications of parked, completed, failed, cancelled and expired invocations, delivered by
the workers at least once (deduplicated on ``webhook-id``), retried with backoff, dead-lettered at the end.

A real HTTP receiver on a thread; real Redis; real ``agentq worker`` processes for the end-to-end test, the
worker's own WebhookDeliverer in-process for the failure modes (bad URL, slow receiver, 500).
"""

from __future__ import annotations

import asyncio
import json
import socket
import threading
import time
import uuid
from collections import defaultdict
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from api import ApiSettings, create_app
from api.access.auth import parse_keys
from api.services import redis_services
from runtime.errors import UsageError
from runtime.redis_store import keys
from runtime.redis_store.launcher import EmbeddedRedis
from tests.api.conftest import make_client
from tests.worker.conftest import WorkerPool
from worker.records.store import InvocationStore
from worker.webhooks import outbox as outbox
from worker.webhooks.config import WebhookSettings
from worker.webhooks.deliverer import WebhookDeliverer
from worker.webhooks.signing import secret_key, sign, verify

SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
KEY = secret_key(SECRET)
OPS, OWNER, READER = "ops-key-0001", "owner-key-001", "reader-key-001"


class Receiver:
    """A real HTTP endpoint on a thread: records every POST, answers from ``script`` ((status, delay) each,
    then 204 at once). Constructed down: nothing listens on its port until ``start``."""

    def __init__(self, script: list[tuple[int, float]] | None = None):
        with socket.socket() as probe:  # a free port, closed again: connections are refused until start()
            probe.bind(("127.0.0.1", 0))
            self.port = probe.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}/hook"
        self.script = list(script or [])
        self.requests: list[tuple[dict[str, str], bytes]] = []
        self._server: ThreadingHTTPServer | None = None

    def start(self) -> Receiver:
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):  # noqa: N802 (http.server's naming)
                body = self.rfile.read(int(self.headers["content-length"]))
                receiver.requests.append(({k.lower(): v for k, v in self.headers.items()}, body))
                status, delay = receiver.script.pop(0) if receiver.script else (204, 0.0)
                time.sleep(delay)
                try:
                    self.send_response(status)
                    self.send_header("content-length", "0")
                    self.end_headers()
                except OSError:  # the sender gave up waiting
                    pass

            def log_message(self, *args):
                pass

        ThreadingHTTPServer.allow_reuse_address = True
        self._server = ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()


@pytest.fixture
def receiver():
    made: list[Receiver] = []

    def make(script=None) -> Receiver:
        made.append(Receiver(script))
        return made[-1]

    yield make
    for one in made:
        one.stop()


def test_signatures_reproduce_the_standard_webhooks_test_vector():
    assert sign(KEY, "msg_p5jXN8AQM9LWM0D4loKWxJek", 1614265330, b'{"test": 2432232314}') == \
        "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
    signed = {"webhook-id": "msg_p5jXN8AQM9LWM0D4loKWxJek", "webhook-timestamp": "1614265330",
              "webhook-signature": "v1,bm9wZQ== v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="}
    assert verify(KEY, signed, b'{"test": 2432232314}', now=1614265330 + 10)
    assert not verify(KEY, signed, b'{"test": 2432232315}', now=1614265330)
    assert not verify(KEY, signed, b'{"test": 2432232314}', now=1614265330 + 301)  # a replay, too old
    assert secret_key("plain-text") == b"plain-text"


def test_webhook_settings_are_read_from_the_environment_and_nonsense_is_refused_naming_it():
    settings = WebhookSettings.from_env({
        "AGENTQ_WEBHOOKS": "weather=https://hooks.example/w, approval=http://10.0.0.1:8080/a?x=1",
        "AGENTQ_WEBHOOK_SECRET": SECRET, "AGENTQ_WEBHOOK_RETRY_FOR": "2h", "AGENTQ_WEBHOOK_TIMEOUT": "0.5"})
    assert (settings.urls_by_app, settings.retry_for_s, settings.timeout_s, settings.secret) == (
        {"weather": "https://hooks.example/w", "approval": "http://10.0.0.1:8080/a?x=1"}, 7200.0, 0.5, SECRET)
    assert settings.url_for("weather") == "https://hooks.example/w"
    assert settings.url_for("weather", "https://own.example/h") == "https://own.example/h"
    assert settings.url_for("broken") is None
    refusals = {
        "AGENTQ_WEBHOOKS": "weather=ftp://hooks.example/w", "AGENTQ_WEBHOOK_TIMEOUT": "-1",
        "AGENTQ_WEBHOOK_BACKOFF": "soon", "AGENTQ_PUBLIC_URL": "agentq.example",
        "AGENTQ_WEBHOOK_SECRET": "whsec_not base64!",
    }
    for variable, value in refusals.items():
        with pytest.raises(UsageError, match=variable):
            WebhookSettings.from_env({variable: value})
    with pytest.raises(UsageError, match="app=value pairs separated by commas, such as app=url"):
        WebhookSettings.from_env({"AGENTQ_WEBHOOKS": "https://hooks.example/w"})


def test_webhooks_are_signed_by_default_and_a_worker_with_configured_webhooks_but_no_secret_is_refused():
    hooks = {"AGENTQ_WEBHOOKS": "weather=https://hooks.example/w"}
    with pytest.raises(UsageError, match="AGENTQ_WEBHOOK_SECRET is not set.*AGENTQ_WEBHOOKS_UNSIGNED=1"):
        WebhookSettings.from_env(hooks).require_signing()
    WebhookSettings.from_env({}).require_signing()  # no webhooks configured: the worker starts
    assert "AGENTQ_WEBHOOK_SECRET is not set" in WebhookSettings.from_env({}).unsigned_refusal()
    WebhookSettings.from_env({**hooks, "AGENTQ_WEBHOOK_SECRET": SECRET}).require_signing()
    unsigned = WebhookSettings.from_env({**hooks, "AGENTQ_WEBHOOKS_UNSIGNED": "1"})
    unsigned.require_signing()
    assert unsigned.unsigned_refusal() is None
    assert (unsigned.unsigned, unsigned.secret) == (True, None)
    with pytest.raises(UsageError, match="AGENTQ_WEBHOOKS_UNSIGNED"):
        WebhookSettings.from_env({"AGENTQ_WEBHOOKS_UNSIGNED": "maybe"})
    allowed = WebhookSettings.from_env({"AGENTQ_WEBHOOK_ALLOW": "hooks.internal, 10.1.0.0/16 ,fd00::1"})
    assert allowed.allow == ("hooks.internal", "10.1.0.0/16", "fd00::1")
    with pytest.raises(UsageError, match="AGENTQ_WEBHOOK_ALLOW"):
        WebhookSettings.from_env({"AGENTQ_WEBHOOK_ALLOW": "10.0.0.0/99"})


def test_agentq_worker_with_configured_webhooks_refuses_to_start_without_a_secret_naming_the_setting(tmp_path):
    import os
    import subprocess
    import sys

    from agentq.local_stack import CLI, ROOT

    env = {k: v for k, v in os.environ.items() if not k.startswith("AGENTQ_WEBHOOK")}
    env.update(PYTHONPATH=str(ROOT), AGENTQ_REDIS_URL="redis://127.0.0.1:1/0",
               AGENTQ_WEBHOOKS="weather=https://hooks.example/w")
    done = subprocess.run([sys.executable, "-c", CLI, "worker", "--app", "examples.weather:app"], env=env,
                          cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and "AGENTQ_WEBHOOK_SECRET is not set" in done.stderr, done.stderr


async def _cancelled_with_webhook(store: InvocationStore, url: str) -> str:
    """An invocation with ``url`` as its webhook, cancelled while queued: one notification in the outbox."""
    user = "u-" + uuid.uuid4().hex[:8]
    session = await store.create_session("weather", user)
    invocation_id = await store.enqueue("weather", user, session.id, "hi", None, None, webhook=url)
    await store.cancel(invocation_id, "changed my mind")
    return invocation_id


async def _deliver_until_settled(deliverer: WebhookDeliverer, redis, timeout: float = 15.0) -> dict:
    """Run the worker's delivery step until the outbox is empty; the final stats."""
    deadline = time.monotonic() + timeout
    while (stats := await outbox.stats(redis))["pending"]:
        assert time.monotonic() < deadline, f"outbox not empty in time: {stats}"
        await deliverer.deliver_due()
        await asyncio.sleep(0.01)
    return stats


def _fast(**overrides) -> WebhookSettings:
    # the receivers are on loopback, which the SSRF rule refuses unless the operator allows it
    return WebhookSettings(**{"secret": SECRET, "backoff_s": 0.02, "backoff_max_s": 0.05, "timeout_s": 2.0,
                              "retry_for_s": 30.0, "allow": ("127.0.0.0/8",), **overrides})


async def test_a_webhook_that_is_not_an_http_url_is_refused_at_enqueue_and_nothing_is_stored(redis_url):
    store = InvocationStore(redis_url)
    session = await store.create_session("weather", "ann")
    for bad in ("ftp://hooks.example/x", "hooks.example/x", "http://", "http://a b/"):
        with pytest.raises(UsageError, match="webhook"):
            await store.enqueue("weather", "ann", session.id, "hi", None, None, webhook=bad)
    assert await store.redis.zcard(keys.user_invocations("weather", "ann")) == 0
    backed = redis_services(redis_url)
    app = create_app(ApiSettings(app_names=["weather"]), backed.services)
    async with make_client(app) as http:
        response = await http.post(f"/apps/weather/users/ann/sessions/{session.id}/invocations",
                                   json={"newMessage": {"parts": [{"text": "hi"}]}, "webhook": "file:///etc/x"})
    assert response.status_code == 422 and "webhook" in response.text and "http" in response.text
    assert await store.redis.zcard(keys.user_invocations("weather", "ann")) == 0
    await backed.aclose()
    await store.aclose()


async def test_without_a_secret_a_per_enqueue_webhook_is_never_sent_unsigned_but_dead_lettered_naming_why(
        redis_url, receiver):
    hook = receiver([]).start()
    store = InvocationStore(redis_url)
    await _cancelled_with_webhook(store, hook.url)
    deliverer = WebhookDeliverer(store, _fast(secret=None))
    stats = await _deliver_until_settled(deliverer, store.redis)
    assert (stats["delivered"], stats["dead"], hook.requests) == (0.0, 1.0, [])
    [dead], _ = await outbox.dead_letters(store.redis, limit=10)
    assert (dead["attempts"], dead["last_error"]) == (1, "not sent: AGENTQ_WEBHOOK_SECRET is not set and "
                                                          "AGENTQ_WEBHOOKS_UNSIGNED is not 1, so it would go out unsigned")
    await deliverer.aclose()
    await store.aclose()


async def test_a_receiver_answering_500_is_retried_with_the_same_id_and_body_until_it_accepts(redis_url, receiver):
    hook = receiver([(500, 0.0), (500, 0.0)]).start()
    store = InvocationStore(redis_url)
    invocation_id = await _cancelled_with_webhook(store, hook.url)
    deliverer = WebhookDeliverer(store, _fast())
    stats = await _deliver_until_settled(deliverer, store.redis)
    assert (stats["delivered"], stats["failed"], stats["dead"]) == (1.0, 2.0, 0.0)
    assert len(hook.requests) == 3
    assert len({headers["webhook-id"] for headers, _ in hook.requests}) == 1
    assert len({body for _, body in hook.requests}) == 1
    assert all(verify(KEY, headers, body) for headers, body in hook.requests)
    body = json.loads(hook.requests[0][1])
    assert (body["type"], body["data"]["invocationId"], body["data"]["status"], body["data"]["cancelReason"]) == (
        "invocation.cancelled", invocation_id, "cancelled", "changed my mind")
    assert hook.requests[0][0]["webhook-id"] == f"{invocation_id}-1"
    await deliverer.aclose()
    await store.aclose()


async def test_a_slow_receiver_times_out_and_is_tried_again(redis_url, receiver):
    hook = receiver([(204, 1.5)]).start()  # the first answer comes after the sender's 0.3 s limit
    store = InvocationStore(redis_url)
    await _cancelled_with_webhook(store, hook.url)
    deliverer = WebhookDeliverer(store, _fast(timeout_s=0.3))
    await deliverer.deliver_due()
    entry = json.loads(await store.redis.hget(keys.webhook_outbox(), (await _ids(store))[0]))
    assert (entry["attempts"], entry["last_error"]) == (1, "no answer within 0.3s")
    stats = await _deliver_until_settled(deliverer, store.redis)
    assert (stats["delivered"], stats["failed"], stats["dead"]) == (1.0, 1.0, 0.0)
    assert len(hook.requests) == 2 and hook.requests[0][1] == hook.requests[1][1]
    await deliverer.aclose()
    await store.aclose()


async def test_a_receiver_answering_410_gone_is_not_retried_and_the_notification_is_a_dead_letter(redis_url, receiver):
    hook = receiver([(410, 0.0)]).start()
    store = InvocationStore(redis_url)
    await _cancelled_with_webhook(store, hook.url)
    deliverer = WebhookDeliverer(store, _fast())
    stats = await _deliver_until_settled(deliverer, store.redis)
    assert (stats["delivered"], stats["dead"], stats["dead_letters"]) == (0.0, 1.0, 1.0)
    assert len(hook.requests) == 1
    await deliverer.aclose()
    await store.aclose()


async def _ids(store: InvocationStore) -> list[str]:
    return await store.redis.hkeys(keys.webhook_outbox())


async def test_a_bad_url_ends_in_the_dead_letter_list_shown_and_redelivered_over_http(redis_url):
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        refused = f"http://127.0.0.1:{probe.getsockname()[1]}/hook"  # nothing listens there once closed
    store = InvocationStore(redis_url)
    first = await _cancelled_with_webhook(store, refused)
    second = await _cancelled_with_webhook(store, "http://no-such-host.invalid/hook")
    deliverer = WebhookDeliverer(store, _fast(retry_for_s=0.3))
    stats = await _deliver_until_settled(deliverer, store.redis)
    assert (stats["delivered"], stats["dead"], stats["dead_letters"]) == (0.0, 2.0, 2.0)
    assert stats["failed"] >= 2

    backed = redis_services(redis_url)
    owner = (await store.get(first)).user_id
    grants = parse_keys({OPS: {"users": ["*"], "apps": ["*"]}, OWNER: {"users": [owner], "apps": ["weather"]},
                         READER: {"users": [owner], "apps": ["weather"], "roles": ["read"]}})
    app = create_app(ApiSettings(app_names=["weather"], keys=grants), backed.services,
                     stats_provider=backed.stats_provider)
    async with make_client(app, key=OPS) as ops, make_client(app, key=OWNER) as own, \
            make_client(app, key=READER) as reader:
        page = (await ops.get("/webhooks/dead-letters", params={"limit": 1})).json()
        rest = (await ops.get("/webhooks/dead-letters", params={"pageToken": page["nextPageToken"]})).json()
        letters = page["deadLetters"] + rest["deadLetters"]
        assert rest["nextPageToken"] is None
        assert sorted((d["invocationId"], d["event"], d["url"]) for d in letters) == sorted([
            (second, "cancelled", "http://no-such-host.invalid/hook"), (first, "cancelled", refused)])
        # newest first, to the millisecond the list is ordered by (two that died in one ms go by delivery id)
        assert int(letters[0]["deadAt"] * 1000) >= int(letters[1]["deadAt"] * 1000)
        errors = {d["invocationId"]: d["lastError"] for d in letters}
        assert all(d["attempts"] >= 1 for d in letters)
        assert "ConnectError" in errors[first]  # refused
        # an unknown host: refused by the resolver, or (a slow resolver on a busy machine) no answer in time
        assert "'no-such-host.invalid' does not resolve" in errors[second], errors[second]
        mine = (await own.get("/webhooks/dead-letters")).json()["deadLetters"]
        assert [(d["invocationId"], "ConnectError" in d["lastError"]) for d in mine] == [(first, True)]
        # why a delivery failed is for the operate role only: to others the list would be a port scanner
        read_only = (await reader.get("/webhooks/dead-letters")).json()["deadLetters"]
        assert [(d["invocationId"], d["lastError"]) for d in read_only] == [(first, None)]
        assert (await own.post(f"/webhooks/dead-letters/{second}-1/redeliver")).status_code == 404
        assert (await ops.get("/webhooks/dead-letters", params={"pageToken": "nope"})).status_code == 400
        metrics = (await ops.get("/metrics")).text
        assert 'agentq_webhook_deliveries_total{outcome="dead"} 2.0' in metrics
        assert "agentq_webhook_dead_letters 2.0" in metrics
        redelivered = await own.post(f"/webhooks/dead-letters/{first}-1/redeliver")
        assert (redelivered.status_code, redelivered.json()) == (202, {"deliveryId": f"{first}-1", "status": "queued"})
        assert (await own.post(f"/webhooks/dead-letters/{first}-1/redeliver")).status_code == 404
    assert await _ids(store) == [f"{first}-1"]
    assert json.loads(await store.redis.hget(keys.webhook_outbox(), f"{first}-1"))["attempts"] == 0
    await backed.aclose()
    await deliverer.aclose()
    await store.aclose()


# --- end to end: real workers, a receiver that is down for the first deliveries ---------------------------


class HookedWorkers(WorkerPool):
    """Worker processes with fast webhook retries, signing with SECRET."""

    def env(self) -> dict[str, str]:
        return {**super().env(), "AGENTQ_WEBHOOK_SECRET": SECRET, "AGENTQ_WEBHOOK_BACKOFF": "0.05",
                "AGENTQ_WEBHOOK_BACKOFF_MAX": "0.5", "AGENTQ_WEBHOOK_POLL": "0.05", "AGENTQ_WEBHOOK_TIMEOUT": "2",
                "AGENTQ_WEBHOOK_RETRY_FOR": "120", "AGENTQ_PUBLIC_URL": "https://agentq.example",
                "AGENTQ_WEBHOOK_ALLOW": "127.0.0.1"}  # the test's receiver, on loopback


@pytest.fixture(scope="module")
def hooked(tmp_path_factory):
    """Two webhook-delivering workers on a redis-server of their own (no other worker takes their deliveries)."""
    server = EmbeddedRedis(tmp_path_factory.mktemp("webhook-redis")).start()
    pool = HookedWorkers(server.url, tmp_path_factory.mktemp("webhook-logs"))
    pool.ensure("h1", "h2")
    yield pool
    pool.stop_all()
    server.stop()


async def _until(check, timeout: float = 30.0):
    deadline = time.monotonic() + timeout
    while not (value := await check()):
        assert time.monotonic() < deadline, "condition not met in time"
        await asyncio.sleep(0.05)
    return value


async def test_a_receiver_down_for_the_first_deliveries_gets_every_notification_once_after_dedup(
        hooked, receiver, monkeypatch):
    from worker.client import AgentqClient

    monkeypatch.setenv("AGENTQ_REDIS_URL", hooked.redis_url)  # the test apps' side-effect counters
    hook = receiver()  # down: nothing listens on its port yet
    client = AgentqClient(hooked.redis_url, webhooks=WebhookSettings(urls_by_app={"weather": hook.url}))
    user = "u-" + uuid.uuid4().hex[:8]

    async def started(app: str, **kwargs) -> str:
        session = await client.create_session(app, user)
        return await client.enqueue(app, user, session.id, "go", **kwargs)

    completes = await started("weather")  # the app's configured webhook
    fails = await started("broken", webhook=hook.url)
    approved, cancelled, deleted = [await started("approval", webhook=hook.url) for _ in range(3)]
    expires = await started("approval", webhook=hook.url, park_timeout=1)  # the reaper answers it after 1 s
    silent = await started("approval")  # no webhook of its own, none configured for its app: no notification
    for invocation_id in (approved, cancelled, deleted, silent):
        assert (await client.wait(invocation_id, timeout=30)).status == "parked"
    call = (await client.get(approved)).pending_calls[0]
    await client.respond(approved, [{"id": call.id, "name": call.name, "response": {"approved": True}}])
    await client.cancel(cancelled, "not needed")
    await client.cancel(silent, "not needed either")
    record = await client.get(deleted)
    await client.delete_session("approval", user, record.session_id)
    for invocation_id in (completes, fails, approved, expires):
        await _until(lambda i=invocation_id: _final(client, i))
    expected = {
        (completes, "invocation.completed"), (fails, "invocation.failed"), (approved, "invocation.parked"),
        (approved, "invocation.completed"), (cancelled, "invocation.parked"), (cancelled, "invocation.cancelled"),
        (deleted, "invocation.parked"), (deleted, "invocation.cancelled"), (expires, "invocation.parked"),
        (expires, "invocation.expired"), (expires, "invocation.completed"),
    }

    redis = client._store.redis

    async def all_attempted() -> bool:  # every notification has failed at least once against the closed port
        entries = [json.loads(raw) for raw in (await redis.hgetall(keys.webhook_outbox())).values()]
        return len(entries) == len(expected) and all(entry.get("attempts", 0) >= 1 for entry in entries)

    try:
        await _until(all_attempted)
    except AssertionError:
        entries = [json.loads(raw) for raw in (await redis.hgetall(keys.webhook_outbox())).values()]
        raise AssertionError(sorted((e["inv"], e["event"], e.get("attempts")) for e in entries)) from None
    hook.start()
    await _until(lambda: _outbox_empty(redis))

    by_id: dict[str, list[bytes]] = defaultdict(list)
    for headers, body in hook.requests:
        assert verify(KEY, headers, body), headers
        by_id[headers["webhook-id"]].append(body)
    assert all(len(set(bodies)) == 1 for bodies in by_id.values())  # a duplicate is the same notification
    bodies = {delivery_id: json.loads(bodies[0]) for delivery_id, bodies in by_id.items()}
    received = sorted((body["data"]["invocationId"], body["type"]) for body in bodies.values())
    assert received == sorted(expected)  # every notification, each exactly once after deduplication

    def body_of(invocation_id: str, kind: str) -> dict:
        return next(b["data"] for b in bodies.values() if (b["data"]["invocationId"], b["type"]) == (
            invocation_id, f"invocation.{kind}"))

    parked = body_of(approved, "parked")
    assert (parked["appName"], parked["userId"], parked["status"], parked["links"]["invocation"]) == (
        "approval", user, "parked", f"https://agentq.example/invocations/{approved}")
    assert [(c["id"], c["name"], c["kind"]) for c in parked["pendingCalls"]] == [
        (call.id, "ask_for_approval", "long_running")]
    assert body_of(approved, "completed")["pendingCalls"] == []
    assert body_of(fails, "failed")["error"]["type"] == "ModelError"
    expired = body_of(expires, "expired")
    assert (expired["status"], len(expired["expiredCalls"])) == ("queued", 1)
    assert body_of(deleted, "cancelled")["cancelReason"].startswith("session ")
    stats = await outbox.stats(redis)
    assert (stats["delivered"], stats["dead"]) == (float(len(expected)), 0.0) and stats["failed"] >= len(expected)
    await client.aclose()


async def _final(client, invocation_id: str) -> bool:
    return (await client.get(invocation_id)).status in ("completed", "failed", "cancelled")


async def _outbox_empty(redis) -> bool:
    return await redis.zcard(keys.webhook_due()) == 0 and await redis.hlen(keys.webhook_outbox()) == 0

