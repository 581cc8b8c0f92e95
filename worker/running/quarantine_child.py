"""The quarantine process's side (worker.running.quarantine): forked by a worker, it runs one claim alone, then exits.

It builds its own event loop, Redis connections, Celery app and runners (a socket inherited from the worker is
never used: both processes would read its replies), then runs the claim as ``Executor.run_claim`` does in a
worker: the same fence on every commit, its own tool journal records, its own heartbeats and settle (so a
heartbeat's reaper entry and the settle that clears it stay in order on one connection). It hands the claim back
on SIGTERM (the worker's graceful shutdown) or when its worker is gone, and exits 0 whatever the outcome of the
run: any other ending is a crash.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import sys
from typing import NoReturn

from runtime.tracing import otel_setup
from worker.fleet import lease
from worker.fleet.lease import Claim
from worker.records.store import InvocationStore
from worker.running.executor import Executor
from worker.running.quarantine import EXIT_GAVE_UP, Quarantine

log = logging.getLogger("agentq.worker")

PARENT_CHECK_S = 0.5
HEARTBEAT_S = 1.0
CHILD_DRAIN_S = 8.0
"""On SIGTERM the child stops at its next event, or is cut off after this (within the worker's own drain)."""

_CELERY_SIGNALS = (signal.SIGTERM, signal.SIGINT, signal.SIGQUIT, signal.SIGHUP, signal.SIGUSR1)


def run_child(quarantine: Quarantine, executor: Executor, claim: Claim, parent: int) -> NoReturn:
    """Run ``claim`` in this freshly forked process and exit with its code (never returns)."""
    code = 0
    try:
        for signum in _CELERY_SIGNALS:  # the inherited handlers are Celery's, for the worker's main thread
            signal.signal(signum, signal.SIG_DFL)
        # A loop of its own; left unclosed, since the process exits right after (and sooner without teardown).
        loop = asyncio.new_event_loop()
        asyncio.set_event_loop(loop)
        loop.run_until_complete(_run(quarantine, executor, claim, parent))
    except SystemExit as exc:  # the agent's code asked the process to exit: that ends the run like a crash
        code = exc.code if isinstance(exc.code, int) else 1
    except BaseException:
        log.exception("invocation %s: quarantine process failed", claim.record.id)
        code = EXIT_GAVE_UP
    finally:
        with contextlib.suppress(Exception):
            sys.stdout.flush()
            sys.stderr.flush()
            otel_setup.flush(2.0)  # os._exit skips the exporter's own flush at exit (a no-op when not tracing)
        os._exit(code)


async def _run(quarantine: Quarantine, parent_executor: Executor, claim: Claim, parent: int) -> None:
    old = quarantine.parent_store
    store = InvocationStore(old.redis_url, retention=old.retention, webhooks=old.webhooks)
    store.remember(claim.record.id, claim.where)
    executor = Executor(store, quarantine.make_runners(store), parent_executor.config)
    task = asyncio.create_task(executor.run_claim(claim), name=claim.record.id)
    executor.active[claim.record.id] = (claim, task)
    beats = asyncio.create_task(_heartbeat(executor, claim))
    loop = asyncio.get_running_loop()

    def drain() -> None:  # the worker's graceful shutdown: hand back at the next event, or cut off later
        executor.draining = True
        loop.call_later(CHILD_DRAIN_S, task.cancel)

    loop.add_signal_handler(signal.SIGTERM, drain)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM})  # blocked since the fork (worker.quarantine)
    while not task.done():
        await asyncio.wait({task}, timeout=PARENT_CHECK_S)
        if not task.done() and os.getppid() != parent:
            log.warning("invocation %s: the worker that forked quarantine process %d is gone; handing it back",
                        claim.record.id, os.getpid())
            task.cancel()
            await asyncio.wait({task})
    beats.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        task.result()


async def _heartbeat(executor: Executor, claim: Claim) -> None:
    """Keep the lease (as ``worker.running.host`` does for a worker's claims); stop the run once it is lost."""
    while True:
        await asyncio.sleep(HEARTBEAT_S)
        if claim.settling:
            continue
        try:
            held = await lease.heartbeat(executor.store, [claim], executor.config.lease_ttl_s)
        except Exception as exc:  # Redis away for a moment: the run rides it out or hands back (worker.recovery)
            log.warning("invocation %s: heartbeat failed: %s: %s", claim.record.id, type(exc).__name__, exc)
            continue
        if not held[0]:
            executor.lease_lost(claim.record.id)
