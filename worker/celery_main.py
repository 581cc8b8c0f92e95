"""The module-level Celery app for the ``celery`` command, configured from ``AGENTQ_*`` variables like
``agentq worker`` (store ``AGENTQ_REDIS_URL``, broker ``AGENTQ_BROKER_URL`` defaulting to it, apps
``AGENTQ_APPS``, per-app queues and caps ``AGENTQ_APP_QUEUES`` / ``AGENTQ_APP_CONCURRENCY``, ...):

    AGENTQ_REDIS_URL=redis://localhost:6379/0 AGENTQ_APPS=examples.weather:app celery -A worker.celery_main worker
    AGENTQ_REDIS_URL=redis://localhost:6379/0 celery -A worker.celery_main flower --port=5555
    AGENTQ_REDIS_URL=redis://localhost:6379/0 celery -A worker.celery_main inspect active

A worker started this way is an agentq worker like one ``agentq worker`` starts (``worker.running.worker_lifecycle``),
named by its Celery node name (``-n``). It checks the store's data layout first, like ``agentq worker``
(``worker.records.migrate.require_layout``): a store newer than this code, or workers of another layout alive on
it, make it exit with status 2 naming both; an older store is migrated first (unless ``AGENTQ_MIGRATE_AT_START=off``).
"""

from __future__ import annotations

import os

from worker.config.broker import broker_url
from worker.queues.celery_app import make_celery
from worker.running.queue_flow import consume_app_queues
from worker.running.worker_lifecycle import attach, build_host

STORE_URL = os.environ.get("AGENTQ_REDIS_URL", "redis://localhost:6379/0")

app = make_celery(broker_url(STORE_URL))
consume_app_queues(app)  # a worker consumes its apps' run queues (worker.run_queues) besides the shared one


def _host_from_env(nodename: str):
    from agentq.settings import Settings
    from worker.queues.app_limits import require_loop_handoff
    from worker.running.apps import load_apps, parse_specs

    settings = Settings.from_env()
    _require_layout(settings, nodename)
    require_loop_handoff(settings.app_concurrency, settings.handoff)
    host = build_host(app, settings, load_apps(parse_specs(settings.apps)), STORE_URL, nodename)
    host.admission.limit_apps(settings.app_concurrency)
    return host


def _require_layout(settings, nodename: str) -> None:
    """Refuse to start (exit status 2, the refusal on stderr) on a store whose layout this code cannot run on.

    Called from Celery's ``worker_init`` signal, whose sender swallows an ``Exception`` (it only logs it): a
    ``SystemExit`` is what stops the worker before it consumes a job."""
    import sys

    from runtime.errors import UsageError
    from worker.records.migrate import require_layout

    try:
        require_layout(STORE_URL, who=f"celery worker {nodename}", retention_s=settings.retention.settled_s)
    except UsageError as exc:
        print(f"celery -A worker.celery_main worker: {exc}", file=sys.stderr)
        raise SystemExit(2) from None


attach(app, _host_from_env)
