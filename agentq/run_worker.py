"""``agentq worker``: a Celery worker whose pool threads hand run jobs to one asyncio loop per process."""

from __future__ import annotations

import argparse
import logging
import os
import secrets
import socket
import sys

log = logging.getLogger("agentq.worker")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The ``agentq worker`` flags (defaults from AGENTQ_* variables)."""
    parser.add_argument("--app", action="append", dest="apps", metavar="MODULE:ATTR",
                        help="an App (or agent) to serve; repeatable; default AGENTQ_APPS (comma-separated)")
    parser.add_argument("--concurrency", type=int, default=None,
                        help="invocations in flight per worker process (AGENTQ_CONCURRENCY, default 1000)")
    parser.add_argument("--threads", type=int, default=None,
                        help="pool threads with --pool threads (AGENTQ_THREADS, default 4)")
    parser.add_argument("--pool", choices=["threads", "solo"], default=None,
                        help="Celery pool (AGENTQ_POOL, default solo: the run task only hands the id to the loop)")
    parser.add_argument("--handoff", choices=["claim", "loop"], default=None,
                        help="ack a run job once its invocation is claimed (claim), or once the event loop has it "
                        "(loop: one thread handoff fewer; the dispatch watchdog covers a crash before the claim). "
                        "AGENTQ_HANDOFF, default loop")
    parser.add_argument("--name", default=None, help="worker name (default agentq-<host>-<pid>)")
    parser.add_argument("--history-cache-mb", type=int, default=None,
                        help="MiB of parsed session histories kept between invocations; 0 turns it off "
                        "(AGENTQ_HISTORY_CACHE_MB, default 64)")


def run(args: argparse.Namespace, settings) -> int:
    """Start the worker and block until it shuts down."""
    from agentq.embedded import ensure_redis
    from runtime.errors import UsageError
    from worker.queues.app_limits import require_loop_handoff
    from worker.running.apps import load_apps, parse_specs
    from worker.webhooks.config import WebhookSettings

    try:
        webhooks = WebhookSettings.from_env()
        webhooks.require_signing()  # signed webhooks by default: no secret, no worker (unless asked unsigned)
        require_loop_handoff(settings.app_concurrency, args.handoff or settings.handoff)
    except UsageError as exc:  # refused at start, naming the setting
        print(f"agentq worker: {exc}", file=sys.stderr)
        return 2
    if os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())  # so `--app examples.weather:app` resolves from the project root
    apps = load_apps(parse_specs(args.apps) or settings.apps)
    local = ensure_redis(settings.redis_url, settings.data_dir, register="worker")
    try:
        from worker.records.migrate import require_layout

        try:  # the store's layout: refused if newer than this code, migrated first if older
            require_layout(local.url, who="agentq worker", retention_s=settings.retention.settled_s)
        except UsageError as exc:
            print(f"agentq worker: {exc}", file=sys.stderr)
            return 2
        return _serve(args, settings, apps, local.url, webhooks)
    finally:
        local.release()  # the last agentq process on the embedded redis-server stops it


def default_worker_name() -> str:
    """``agentq-<host>-<pid>-<random>``: unique per process even where host names and pids repeat (containers on
    the host network, each its own pid 1), so two workers never count as one alive."""
    return f"agentq-{socket.gethostname()}-{os.getpid()}-{secrets.token_hex(3)}"


def _serve(args: argparse.Namespace, settings, apps, redis_url: str, webhooks) -> int:
    """Run the Celery worker on ``redis_url`` (the store; the broker is AGENTQ_BROKER_URL or the same) until it
    shuts down. The host is built, announced and drained by ``worker.running.worker_lifecycle``, as under plain celery."""
    from worker.config.broker import broker_url
    from worker.queues.celery_app import make_celery
    from worker.queues.dispatch import QUEUE
    from worker.running.queue_flow import consume_app_queues
    from worker.running.worker_lifecycle import attach, build_host

    name = args.name or default_worker_name()
    celery_app = make_celery(broker_url(redis_url))

    def host_for(_nodename: str):
        host = build_host(celery_app, settings, apps, redis_url, name, webhooks=webhooks,
                          concurrency=args.concurrency, history_cache_mb=args.history_cache_mb, handoff=args.handoff)
        host.admission.limit_apps(settings.app_concurrency)
        return host

    attach(celery_app, host_for)
    consume_app_queues(celery_app)  # the apps' run queues besides the shared one (worker.run_queues)
    log.info("worker %s: store %s, broker %s, apps %s", name, redis_url, broker_url(redis_url), sorted(apps))
    worker = celery_app.Worker(
        hostname=f"{name}@{socket.gethostname()}", pool=args.pool or settings.pool,
        concurrency=args.threads or settings.threads, queues=[QUEUE], loglevel=settings.log_level,
        without_gossip=True, without_mingle=True, optimization="fair",
    )
    in_flight = args.concurrency or settings.concurrency
    banner = worker.startup_info
    worker.startup_info = lambda artlines=True: agentq_banner(banner(artlines), in_flight)
    worker.start()
    return worker.exitcode or 0


def agentq_banner(text: str, in_flight: int) -> str:
    """Celery's start banner with its ``concurrency`` line saying what agentq runs: ``in_flight`` invocations
    per process on one event loop; Celery's pool size (``4 (solo)``) only counts the threads that hand jobs over."""
    lines = text.splitlines()
    for n, line in enumerate(lines):
        head, found, pool = line.partition(".> concurrency: ")
        if found:
            lines[n] = f"{head}.> concurrency: {in_flight} invocations in flight (agentq; Celery pool: {pool})"
    return "\n".join(lines)
