"""Webhook figures on /metrics, read from Redis at scrape time: every worker counts its deliveries there
(``worker.webhooks.outbox``), so one scrape of the API covers the whole fleet."""

from __future__ import annotations

from prometheus_client import CollectorRegistry
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily

OUTCOMES = ("delivered", "failed", "dead")


class WebhookCollector:
    """``agentq_webhook_deliveries_total{outcome}`` (delivered notifications, failed attempts, notifications
    given up), ``agentq_webhook_pending`` and ``agentq_webhook_dead_letters``, as of the last refresh."""

    def __init__(self, registry: CollectorRegistry):
        self.values: dict[str, float] = {}
        registry.register(self)

    def update(self, values: dict[str, float]) -> None:
        """Take the figures read from Redis (``worker.webhooks.outbox.stats``)."""
        self.values = dict(values)

    def collect(self):
        """The metric families (prometheus_client's collector protocol)."""
        deliveries = CounterMetricFamily("agentq_webhook_deliveries", "Webhook notifications delivered, failed "
                                         "attempts, notifications moved to the dead-letter list", labels=["outcome"])
        for outcome in OUTCOMES:
            deliveries.add_metric([outcome], self.values.get(outcome, 0.0))
        yield deliveries
        yield GaugeMetricFamily("agentq_webhook_pending", "Webhook notifications waiting to be delivered",
                                value=self.values.get("pending", 0.0))
        yield GaugeMetricFamily("agentq_webhook_dead_letters", "Webhook notifications in the dead-letter list",
                                value=self.values.get("dead_letters", 0.0))
