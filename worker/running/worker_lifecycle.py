"""What an agentq worker process does around Celery: build its WorkerHost when the worker starts, announce it
once it consumes, hand its invocations back when it stops.

Hooked to Celery's public worker signals, so ``agentq worker`` and ``celery -A worker.celery_main worker``
start, serve and stop the same way.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable
from typing import Any

from celery import signals

from runtime.tracing import otel_setup
from worker.fleet import app_catalog, workers_alive
from worker.running import host as worker_host
from worker.running.process_tuning import tune_worker_process

log = logging.getLogger("agentq.worker")


def attach(app: Any, build_host: Callable[[str], worker_host.WorkerHost]) -> None:
    """Run ``build_host(nodename)`` when a worker of ``app`` starts (before it consumes), register the host's
    worker name in ``keys.workers()`` once it is ready, and drain and unregister it at shutdown."""

    built: list[worker_host.WorkerHost] = []  # this process's host, once its worker started

    @signals.worker_init.connect(weak=False)
    def _init(sender, **_kwargs) -> None:
        if sender.app is app:
            otel_setup.configure_from_env("agentq-worker")  # only when the OTEL_* settings name an endpoint
            built.append(build_host(sender.hostname))
            worker_host.install(built[0])
            tune_worker_process()

    @signals.worker_ready.connect(weak=False)
    def _ready(sender, **_kwargs) -> None:
        if sender.app is not app or not built:
            return
        host = built[0]
        from runtime.redis_store.layout import LAYOUT_VERSION

        # the layout tells a starting process of another release that this one is alive (worker.migrate)
        entry = {"pid": os.getpid(), "apps": sorted(host.apps), "started_at": time.time(), "layout": LAYOUT_VERSION}
        with _store_client(host) as client:
            # described first: an API that sees the announcement serves the app, and reads its description then
            app_catalog.publish(client, host.apps)
            workers_alive.announce(client, host.config.worker_name, entry)  # alive (beating) once announced
        log.info("worker %s: ready", host.config.worker_name)

    @signals.worker_shutdown.connect(weak=False)
    def _stop(sender, **_kwargs) -> None:
        if sender.app is not app or not built:
            return
        host = built[0]
        log.info("worker %s: shutting down, handing running invocations back", host.config.worker_name)
        host.stop()
        with _store_client(host) as client:
            client.hdel(_workers_key(), host.config.worker_name)
        otel_setup.flush()  # the last runs' spans, before the process exits


def build_host(app: Any, settings: Any, apps: dict, redis_url: str, name: str, *, webhooks: Any = None,
               concurrency: int | None = None, history_cache_mb: int | None = None,
               handoff: str | None = None) -> worker_host.WorkerHost:
    """A WorkerHost for ``settings`` (``agentq.settings.Settings``), the keyword arguments overriding them;
    its run jobs are sent through ``app``."""
    from worker.running.executor import ExecutorConfig
    from worker.webhooks.config import WebhookSettings

    webhooks = webhooks or WebhookSettings.from_env()
    webhooks.require_signing()  # a worker without a webhook secret does not start (unless asked unsigned)
    config = ExecutorConfig(worker_name=name, max_in_flight=concurrency or settings.concurrency)
    history_mb = history_cache_mb if history_cache_mb is not None else settings.history_cache_mb
    if history_mb is not None:
        config.history_cache_bytes = history_mb * 1024 * 1024
    return worker_host.WorkerHost(
        redis_url, apps, config=config, celery_app=app, wait_for_claim=(handoff or settings.handoff) == "claim",
        retention=settings.retention, webhooks=webhooks)


def _store_client(host: worker_host.WorkerHost):
    from runtime.redis_store.redis_url import redis_client_from_url

    return redis_client_from_url(host.redis_url, asyncio=False)


def _workers_key() -> str:
    from runtime.redis_store import keys

    return keys.workers()
