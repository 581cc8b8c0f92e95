"""Prometheus metrics of the API: request counts and latencies, stream rate, invocations, queue depth.

Each app has its own CollectorRegistry, so several apps in one process (tests) never collide.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable

from fastapi import Request
from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from api.views.webhook_metrics import WebhookCollector

log = logging.getLogger("agentq.api")

StatsProvider = Callable[[], Awaitable[dict[str, dict[str, float]]]]
"""Returns ``{"invocations": {status: count}, "queue_depth": {queue: length}}`` at scrape time."""


class Metrics:
    """The API's collectors in their own registry."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        self.requests = Counter(
            "agentq_api_requests", "HTTP requests answered", ["method", "route", "status"], registry=self.registry
        )
        self.latency = Histogram(
            "agentq_api_request_seconds",
            "Time to the first response byte (SSE: until the stream opens)",
            ["method", "route"],
            registry=self.registry,
            buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10),
        )
        self.enqueued = Counter("agentq_api_enqueued", "Invocations enqueued through the API", registry=self.registry)
        self.responded = Counter(
            "agentq_api_function_responses", "Function-response requests accepted", registry=self.registry
        )
        self.streamed = Counter(
            "agentq_api_stream_entries", "Stream entries sent to SSE clients", ["kind"], registry=self.registry
        )
        self.first_frame = Histogram(
            "agentq_api_first_event_seconds",
            "From enqueue to the first event of /run and /run_sse",
            registry=self.registry,
            buckets=(0.001, 0.002, 0.003, 0.005, 0.01, 0.025, 0.05, 0.1, 0.5, 1, 5),
        )
        self.invocations = Gauge(
            "agentq_invocations",
            "Invocations by status at scrape time (exact: counters kept by each transition)",
            ["status"],
            registry=self.registry,
        )
        self.count_underflows = Gauge(
            "agentq_status_count_underflows",
            "Transitions that would have moved a status count below zero (a bug: the counter was left at 0)",
            registry=self.registry,
        )
        self.queue_depth = Gauge(
            "agentq_queue_depth", "Run jobs waiting in the broker queue", ["queue"], registry=self.registry
        )
        self.webhooks = WebhookCollector(self.registry)

    async def refresh(self, provider: StatsProvider | None) -> None:
        """Update the scrape-time gauges from ``provider`` (errors are logged, never fail the scrape)."""
        if provider is None:
            return
        try:
            stats = await provider()
        except Exception:
            log.warning("metrics: could not read invocation stats", exc_info=True)
            return
        for status, count in stats.get("invocations", {}).items():
            self.invocations.labels(status=status).set(count)
        for queue, depth in stats.get("queue_depth", {}).items():
            self.queue_depth.labels(queue=queue).set(depth)
        if "status_count_underflows" in stats:
            self.count_underflows.set(stats["status_count_underflows"])
        if "webhooks" in stats:
            self.webhooks.update(stats["webhooks"])


async def get_metrics(request: Request) -> Metrics:
    """The app's Metrics."""
    return request.app.state.metrics


class RequestMetrics:
    """ASGI middleware counting requests and timing them to the response start (safe for streaming)."""

    def __init__(self, app: ASGIApp, *, metrics: Metrics):
        self.app = app
        self.metrics = metrics

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()

        async def timed_send(message: Message) -> None:
            if message["type"] == "http.response.start":
                route = scope.get("route")
                path = getattr(route, "path", "unmatched")
                method = scope.get("method", "")
                self.metrics.latency.labels(method=method, route=path).observe(time.perf_counter() - started)
                self.metrics.requests.labels(method=method, route=path, status=str(message["status"])).inc()
            await send(message)

        await self.app(scope, receive, timed_send)
