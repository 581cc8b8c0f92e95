"""WebhookDeliverer: every worker process POSTs the outbox's due notifications, signed, and retries failures.

Runs on the worker's event loop beside the invocations (``WorkerHost``), never inside one: a slow or dead
receiver costs a pending HTTP request, not an invocation's progress. Delivery is at least once: a receiver may
see a notification again (a worker died after the POST, or a claim's hold ran out mid-request) and deduplicates
on ``webhook-id``, which is the same over every retry. A failed attempt (no connection, a timeout, any status
but 2xx and 410) is tried again after a random delay up to ``backoff_s * 2**(attempts-1)`` (capped at
``backoff_max_s``; "full jitter"), until ``retry_for_s`` after the transition; the last failure moves it to
the dead-letter list (``GET /webhooks/dead-letters``), as does a 410 Gone at once (the receiver removed the
endpoint; a redelivery from the dead letters can still send it once it is back). A URL the SSRF rule refuses
(``worker.webhooks.ssrf``: checked again here, after resolving, and the checked address is the one connected
to; redirects are never followed) goes to the dead letters at once too.
"""

from __future__ import annotations

import asyncio
import json
import logging
import random
import time
from datetime import UTC, datetime
from typing import Any

import httpx

from runtime.redis_store import keys
from worker.config.due_shards import Reseeder
from worker.records.record import PendingCall
from worker.webhooks import due
from worker.webhooks import outbox as outbox
from worker.webhooks.config import WebhookSettings
from worker.webhooks.signing import headers, secret_key
from worker.webhooks.ssrf import Resolver, WebhookHostUnresolvedError, WebhookTargetRefusedError

log = logging.getLogger("agentq.webhooks")

BATCH = 50
"""Notifications one worker process sends at once per poll."""
HOLD_MARGIN_S = 10.0
"""A claim holds a notification for the POST's timeout plus this, before another worker may take it."""


def payload(entry: dict, public_url: str | None = None) -> bytes:
    """The body of a notification: the same bytes on every attempt (it is built from the outbox entry only)."""
    invocation_id = entry["inv"]
    link = f"{(public_url or '').rstrip('/')}/invocations/{invocation_id}"
    calls = [PendingCall(**{k: v for k, v in call.items() if k != "seq"}) for call in json.loads(entry["calls"])]
    data: dict[str, Any] = {
        "invocationId": invocation_id, "appName": entry["app"], "userId": entry["user"],
        "sessionId": entry["session"], "status": entry["status"],
        "pendingCalls": [{**call.to_json_dict(), "kind": call.kind} for call in calls],
        "error": json.loads(entry["error"]) if entry["error"] else None,
        "cancelReason": entry["reason"] or None,
        "links": {"invocation": link, "events": link + "/events"},
    }
    if entry["event"] == "expired":
        data["expiredCalls"] = json.loads(entry["expired"])
    if entry.get("audit"):  # who answered, cancelled or redelivered so far (worker.audit), oldest first
        data["audit"] = json.loads(entry["audit"])
    at = datetime.fromtimestamp(float(entry["at"]), UTC).isoformat().replace("+00:00", "Z")
    body = {"type": f"invocation.{entry['event']}", "timestamp": at, "data": data}
    return json.dumps(body, separators=(",", ":"), ensure_ascii=False).encode()


def backoff(settings: WebhookSettings, attempts: int) -> float:
    """The delay before the next try after ``attempts`` failed ones: uniform in [0, the doubling bound]."""
    bound = min(settings.backoff_max_s, settings.backoff_s * 2 ** min(attempts - 1, 60))
    return random.uniform(0, bound)


class WebhookDeliverer:
    """Claims due notifications and sends them; one per worker process, on its event loop."""

    def __init__(self, store: Any, settings: WebhookSettings, *, batch: int = BATCH,
                 resolver: Resolver | None = None):
        """``resolver``: answers DNS for the SSRF check (default: the system's; tests stub it)."""
        self.store = store
        self.settings = settings
        self.batch = batch
        self.guard = settings.guard(resolver)
        self._key = secret_key(settings.secret) if settings.secret else None
        self._http: httpx.AsyncClient | None = None
        self._warned_unsigned = False
        self._reseeder = Reseeder(keys.webhook_due_shards_reseed, due.reseed)
        """This process's turn at re-seeding the due index (Cluster only)."""

    async def deliver_due(self) -> int:
        """One poll: send what is due (up to ``batch``, concurrently); how many were tried. On one node that is
        one claim; on a Cluster, one per shard with a delivery due (``worker.webhooks.due``), none when idle."""
        hold_s = self.settings.timeout_s + HOLD_MARGIN_S
        if not self.store.clients.is_cluster:
            return await self._send(await outbox.claim(self.store.redis, limit=self.batch, hold_s=hold_s))
        await self._reseeder.maybe_reseed(self.store)
        shards, claimed_ms = await due.claim(self.store.mux, due.now_ms())
        if not shards:
            return 0
        try:
            entries = await outbox.claim(self.store.redis, limit=self.batch, hold_s=hold_s, shards=shards)
            return await self._send(entries)
        finally:  # even after a failure: a shard whose deliveries are still there must be visited again
            settled = await asyncio.gather(*(due.settle(self.store.mux, shard, claimed_ms) for shard in shards),
                                           return_exceptions=True)
            for failure in (outcome for outcome in settled if isinstance(outcome, Exception)):
                log.error("webhook due index: a shard's score not settled (the next re-seed restores it): %s",
                          failure)

    async def _send(self, entries: list[dict]) -> int:
        """Send claimed notifications concurrently and record each outcome; how many were tried."""
        outcomes = await asyncio.gather(*(self._attempt(entry) for entry in entries), return_exceptions=True)
        for entry, outcome in zip(entries, outcomes, strict=True):
            if isinstance(outcome, Exception):  # Redis trouble: the claim's hold runs out, it is tried again
                log.error("invocation %s: webhook %s not recorded", entry["inv"], entry["id"], exc_info=outcome)
        return len(entries)

    async def _attempt(self, entry: dict) -> None:
        redis = self.store.redis
        try:
            body = payload(entry, self.settings.public_url)
        except (KeyError, TypeError, ValueError, AttributeError) as exc:  # an older or unexpected entry shape
            error = f"this release cannot build the notification from its outbox entry ({type(exc).__name__}: {exc})"
            placed = await outbox.unsendable(redis, entry, error=error)
            log.error("webhook %s: %s; %s", entry["id"], error,
                      "moved to the dead letters" if placed else "it names no app or user: left in the outbox")
            return
        error, gone = await self._post(entry, body)
        if error is None:
            await outbox.delivered(redis, entry)
            log.info("invocation %s: webhook %s (%s) delivered", entry["inv"], entry["id"], entry["event"])
            return
        now = time.time()
        attempts = entry.get("attempts", 0) + 1
        deadline = float(entry["at"]) + self.settings.retry_for_s
        if gone or now >= deadline:
            await outbox.dead(redis, entry, error=error, now=now)
            log.warning("invocation %s: webhook %s (%s) dead after %d attempts: %s", entry["inv"], entry["id"],
                        entry["event"], attempts, error)
            return
        at = min(now + backoff(self.settings, attempts), deadline)
        await outbox.retry(redis, entry, at=at, error=error)
        log.info("invocation %s: webhook %s (%s) attempt %d failed (%s), next in %.2fs", entry["inv"], entry["id"],
                 entry["event"], attempts, error, at - now)

    async def _post(self, entry: dict, body: bytes) -> tuple[str | None, bool]:
        """(None, False) when the receiver answered 2xx in time, else (what went wrong, whether retrying is
        pointless: 410 Gone says the endpoint was removed, so the notification goes to the dead letters at once)."""
        refusal = self.settings.unsigned_refusal()
        if refusal is not None:  # signed by default: never sent unsigned unless the operator asked for it
            return refusal, True
        if self._key is None and not self._warned_unsigned:
            self._warned_unsigned = True
            log.warning("AGENTQ_WEBHOOKS_UNSIGNED=1: webhooks are sent without a signature")
        try:
            target = await self.guard.pin(entry["url"])
        except WebhookHostUnresolvedError as exc:
            return str(exc), False
        except WebhookTargetRefusedError as exc:
            return str(exc), True
        sent = {**headers(self._key, entry["id"], body), "host": target.host_header}
        sni = {"sni_hostname": target.host} if target.address is not None else {}
        try:
            async with asyncio.timeout(self.settings.timeout_s):
                response = await self._client().post(target.connect_url, content=body, headers=sent,
                                                     extensions=sni)
        except TimeoutError:
            return f"no answer within {self.settings.timeout_s:g}s", False
        except httpx.HTTPError as exc:
            return (f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__), False
        if response.status_code == 410:
            return "HTTP 410 Gone: the receiver removed this endpoint, not retried", True
        if not 200 <= response.status_code < 300:
            return f"HTTP {response.status_code}", False
        return None, False

    def _client(self) -> httpx.AsyncClient:
        if self._http is None:  # created on the loop that uses it
            self._http = httpx.AsyncClient(timeout=self.settings.timeout_s, follow_redirects=False)
        return self._http

    async def aclose(self) -> None:
        """Close the HTTP connections."""
        if self._http is not None:
            await self._http.aclose()
            self._http = None
