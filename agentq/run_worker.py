"""``agentq worker``: a Celery worker whose pool threads hand run jobs to one asyncio loop per process."""

from __future__ import annotations

import argparse
import logging
import os
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
    from celery import signals

    from agentq.settings import ensure_redis
    from worker import broker_client, broker_writes
    from worker import host as worker_host
    from worker.apps import load_apps, parse_specs
    from worker.celery_app import make_celery
    from worker.dispatch import QUEUE
    from worker.executor import ExecutorConfig

    if os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())  # so `--app examples.weather:app` resolves from the project root
    apps = load_apps(parse_specs(args.apps) or settings.apps)
    redis_url, embedded = ensure_redis(settings.redis_url, settings.data_dir)
    name = args.name or f"agentq-{socket.gethostname()}-{os.getpid()}"
    config = ExecutorConfig(worker_name=name, max_in_flight=args.concurrency or settings.concurrency)
    history_mb = args.history_cache_mb if args.history_cache_mb is not None else settings.history_cache_mb
    if history_mb is not None:
        config.history_cache_bytes = history_mb * 1024 * 1024
    celery_app = make_celery(redis_url)
    broker_client.install()
    broker_writes.install()
    handoff = args.handoff or settings.handoff
    host = worker_host.WorkerHost(redis_url, apps, config=config, wait_for_claim=handoff == "claim",
                                  retention=settings.retention)
    worker_host.install(host)

    @signals.worker_shutdown.connect(weak=False)
    def _stop(**_kwargs) -> None:
        import redis

        from runtime.redis_store import keys

        log.info("worker %s: shutting down, handing running invocations back", name)
        host.stop()
        with redis.Redis.from_url(redis_url) as client:
            client.hdel(keys.workers(), name)

    @signals.worker_ready.connect(weak=False)
    def _ready(**_kwargs) -> None:
        import json
        import time

        import redis

        from runtime.redis_store import keys

        with redis.Redis.from_url(redis_url) as client:
            client.hset(keys.workers(), name, json.dumps(
                {"pid": os.getpid(), "apps": sorted(apps), "started_at": time.time()}))
        log.info("worker %s: ready", name)

    log.info("worker %s: broker %s, apps %s, %d in flight max", name, redis_url, sorted(apps),
             config.max_in_flight)
    worker = celery_app.Worker(
        hostname=f"{name}@{socket.gethostname()}", pool=args.pool or settings.pool,
        concurrency=args.threads or settings.threads, queues=[QUEUE], loglevel=settings.log_level,
        without_gossip=True, without_mingle=True, optimization="fair",
    )
    try:
        worker.start()
    finally:
        if embedded is not None:
            embedded.stop()
    return worker.exitcode or 0
