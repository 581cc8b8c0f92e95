"""WorkerHost: everything one worker process runs besides Celery itself: the loop, executor, heartbeats, reaper."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import random
import socket
import threading

from runtime.redis_store.availability import Backoff, is_store_unavailable
from worker.fleet import lease
from worker.fleet import workers_alive as alive
from worker.fleet.reaper import reap_once
from worker.fleet.recovery import Reachability
from worker.queues.app_limits import AppLimits
from worker.records.store import InvocationStore, Where
from worker.running.apps import load_apps, parse_specs
from worker.running.executor import Executor, ExecutorConfig
from worker.running.loop import LoopThread
from worker.running.process_tuning import tune_worker_process
from worker.running.quarantine import Quarantine
from worker.webhooks.config import WebhookSettings
from worker.webhooks.deliverer import WebhookDeliverer

log = logging.getLogger("agentq.worker")

HEARTBEAT_S = 1.0
DRAIN_S = 10.0
REAP_S = 1.0
IDLE_HANDOFF_WAIT_S = 0.004
"""Longest a Celery thread waits, on an idle process, for a handed-over run's first agent event (see run_job)."""

_current: WorkerHost | None = None


class WorkerHost:
    """Owns the event loop thread and what runs on it; Celery's run task hands invocation ids to it."""

    def __init__(self, redis_url: str, apps: dict, *, config: ExecutorConfig | None = None,
                 celery_app=None, heartbeat_s: float = HEARTBEAT_S, reap_s: float = REAP_S,
                 wait_for_claim: bool = False, retention=None, webhooks: WebhookSettings | None = None):
        self.redis_url = redis_url
        self.apps = apps
        self.config = config or ExecutorConfig(worker_name=f"{socket.gethostname()}:{os.getpid()}")
        self.heartbeat_s = heartbeat_s
        self.reap_s = reap_s
        self.store = InvocationStore(redis_url, celery_app=celery_app, retention=retention, webhooks=webhooks)
        self.webhooks = WebhookDeliverer(self.store, self.store.webhooks)
        self.store.session_service.keep_histories(self.config.history_cache_bytes)
        self.loop = LoopThread()
        self.executor: Executor = self.loop.run(self._build())
        self.wait_for_claim = wait_for_claim
        self._first_commit: dict[str, threading.Event] = {}
        self.store.session_service.after_commit = self._committed
        self.admission = AppLimits(self.config.max_in_flight)
        """The process's and each app's cap: a job over one waits its turn without holding up Celery."""
        self._reachability = Reachability(f"worker {self.config.worker_name}")
        beat = alive.beater(self.store, self.config.worker_name)  # liveness for the API's "no worker" banner
        self._background = [self.loop.submit(self._every(self.heartbeat_s, self._heartbeat)),
                            self.loop.submit(self._every(self.reap_s, self._reap)),
                            self.loop.submit(self._every(alive.BEAT_S, beat))]
        self._background.append(self.loop.submit(self._every(self.store.webhooks.poll_s, self.webhooks.deliver_due)))
        log.info("worker %s serving apps %s", self.config.worker_name, sorted(apps))

    async def _build(self) -> Executor:
        quarantine = Quarantine(self.store, lambda store: build_runners(store, self.apps))
        return Executor(self.store, build_runners(self.store, self.apps), self.config, quarantine)

    def run_job(self, invocation_id: str, where: list[str] | None = None) -> str:
        """Hand an invocation to the loop (called on a Celery pool thread).

        ``wait_for_claim``: return once the lease is taken (or the job dropped), so the message is acknowledged
        only after the claim. Otherwise return as soon as the loop has it: a thread handoff fewer per job; a
        worker dying before the claim is covered by the dispatch watchdog, which keeps the invocation's entry
        until a heartbeat tracks its lease. Either way at most ``max_in_flight`` invocations are taken on.
        """
        if self.wait_for_claim:
            return self.loop.run(self._start(invocation_id, where))
        if not self.admission.offer(invocation_id, where):
            return "waiting"  # its app or the process is full: begun when a slot frees (worker.app_limits)
        # On an idle process, stay out of the way until the agent's first event is committed (at most
        # IDLE_HANDOFF_WAIT_S): Celery's own work for this job (its tracer, ack, task events) would otherwise
        # compete for the GIL with the claim and the first commits, right where a client waits for the first
        # event. With a slow model the wait simply times out. Under load, return at once: the consumer has
        # other jobs to take.
        first_commit = None
        if not self.executor.active and not self._first_commit:
            first_commit = self._first_commit[invocation_id] = threading.Event()
        self.loop.loop.call_soon_threadsafe(self._begin, invocation_id, where)
        if first_commit is not None:
            first_commit.wait(IDLE_HANDOFF_WAIT_S)
            self._first_commit.pop(invocation_id, None)
        return "handed over"

    def _committed(self, event) -> None:
        """After every commit, on the loop: wake a Celery thread waiting for this invocation's first agent event."""
        if self._first_commit and event.author != "user":
            self._release_waiter(event.invocation_id)

    def _release_waiter(self, invocation_id: str) -> None:
        waiting = self._first_commit.pop(invocation_id, None)
        if waiting is not None:
            waiting.set()

    def _begin(self, invocation_id: str, where: list[str] | None) -> None:
        task = self.loop.loop.create_task(self._start(invocation_id, where))
        task.add_done_callback(_log_failure)

    async def _start(self, invocation_id: str, where: list[str] | None) -> str:
        if where and invocation_id not in self.store._where:  # (loop thread only: the cache is not locked)
            app, user, session = where
            self.store.remember(invocation_id, Where(app=app, user=user, session=session))
        try:
            outcome = await self.executor.start(invocation_id)
        except BaseException:
            self._release_waiter(invocation_id)  # nothing will be committed: release a waiting Celery thread
            self._finished(where)
            raise
        if outcome != "started":
            self._release_waiter(invocation_id)
            self._finished(where)
        else:
            self.executor.active[invocation_id][1].add_done_callback(lambda _task: self._finished(where))
        return outcome

    def _finished(self, where: list[str] | None) -> None:
        """A job admitted by ``run_job`` is over: begin the waiting jobs its slot lets in."""
        if not self.wait_for_claim:
            for job in self.admission.finished(where[0] if where else None):
                self._begin(*job)

    async def _every(self, period: float, step) -> None:
        name = step.__name__.strip("_")
        backoff = Backoff(base_s=0.1, cap_s=period)  # while Redis is away: from 0.1 s, doubling up to the period
        delay = period
        while True:
            await asyncio.sleep(delay * random.uniform(0.8, 1.0))
            try:
                await step()
            except Exception as exc:  # a Redis hiccup must not stop heartbeats for good
                if not is_store_unavailable(exc):
                    log.exception("background step %s failed", name)
                    continue
                self._reachability.failed(name, exc)  # one line per process while Redis is away
                delay = backoff.next_delay()
                continue
            self._reachability.succeeded(name)
            backoff.reset()
            delay = period

    async def _heartbeat(self) -> None:
        entries = [(i, entry) for i, entry in self.executor.active.items()
                   if not entry[0].settling and not entry[0].in_child]
        held = await lease.heartbeat(self.store, [claim for _, (claim, _) in entries], self.config.lease_ttl_s)
        for (invocation_id, _), ok in zip(entries, held, strict=True):
            if not ok:
                self.executor.lease_lost(invocation_id)

    async def _reap(self) -> None:
        await reap_once(self.store)

    def stop(self, grace: float = DRAIN_S) -> None:
        """Hand running invocations back so other workers continue them at once, then stop the loop.

        Each invocation stops at its next committed event (a tool call in progress completes first); those
        still running after ``grace`` seconds are cancelled and handed back as they are.
        """

        async def drain() -> None:
            self.executor.begin_drain()
            tasks = [task for _, task in self.executor.active.values()]
            if tasks:
                _, late = await asyncio.wait(tasks, timeout=grace)
                for task in late:
                    task.cancel()
                await asyncio.wait(late, timeout=5) if late else None
            for future in self._background:
                future.cancel()
            await self.webhooks.aclose()
            await self.store.aclose()

        with contextlib.suppress(Exception):
            self.loop.submit(drain()).result(grace + 10)
        self.loop.stop()


def build_runners(store: InvocationStore, apps: dict) -> dict:
    """A Runner per app on ``store``'s session service, with the Redis artifact service, tool journal and span
    store (built on the loop that will use them)."""
    from runtime.artifacts.redis_artifact_service import RedisArtifactService
    from runtime.runners import Runner
    from runtime.tracing import RedisSpanStore
    from worker.records.credentials import credential_service_from_env
    from worker.running.conformance import replay_plugins
    from worker.running.journal import RedisToolJournal

    journal = RedisToolJournal(store)
    artifacts = RedisArtifactService(store.redis_url)
    spans = RedisSpanStore(store.redis_url, ttl_s=store.retention.settled_s)  # the trace view's spans
    return {
        name: Runner(app_name=name, agent=app.root_agent, session_service=store.session_service,
                     artifact_service=artifacts, tool_journal=journal, resumable=_adk_resumable(app),
                     credential_service=credential_service_from_env(lambda: store.redis),
                     plugins=[*app.plugins, *replay_plugins()],
                     events_compaction_config=app.events_compaction_config, span_store=spans)
        for name, app in apps.items()
    }


def _adk_resumable(app) -> bool | None:
    """True for an app google-adk runs resumable (its checkpoint events are then committed, as ADK commits
    them); None otherwise: the runner is durable through its tool journal and commits what ADK's plain run does."""
    config = getattr(app, "resumability_config", None)
    return True if config is not None and config.is_resumable else None


def _log_failure(task: asyncio.Task) -> None:
    if not task.cancelled() and task.exception() is not None:
        log.error("run job failed before its claim (the dispatch watchdog will send it again)",
                  exc_info=task.exception())


def install(host: WorkerHost) -> None:
    """Make ``host`` the one this process's run tasks use."""
    global _current
    _current = host


def current() -> WorkerHost:
    """This process's host; built from ``AGENTQ_REDIS_URL`` and ``AGENTQ_APPS`` when started by plain celery."""
    global _current
    if _current is None:
        from agentq.settings import Settings

        settings = Settings.from_env()
        _current = WorkerHost(settings.redis_url, load_apps(parse_specs(settings.apps)),
                              retention=settings.retention, webhooks=WebhookSettings.from_env())
        tune_worker_process()
    return _current
