"""AppQueues: the Celery consumer step that consumes the run queues of the apps a worker serves, and pauses a queue
while one of its apps has a full line in ``worker.queues.app_limits``.

Why pause rather than block: the run task never waits for a slot (a job over a cap waits in its app's line), so
Celery's consumer keeps taking messages, and kombu's round robin over the queues hands it a quiet app's job next
however long the busy app's queue is. Without a pause the consumer would then pull the whole flood into this
process; pausing the full app's queue leaves it in the broker for other workers, and the other queues flow on.

Pausing and resuming use kombu's ``Consumer`` (``cancel_by_queue``, ``add_queue`` + ``consume``) on Celery's
``task_consumer``, on the consumer's own thread (a timer of the step, every ``TICK_S``), as Celery's own
``cancel_consumer`` / ``add_consumer`` control commands do; they are not logged (a capped flood pauses and resumes
its queue many times a second), the first ``add_task_queue`` of each queue is.
"""

from __future__ import annotations

import asyncio
import logging
import time

from celery import bootsteps

from worker.config.run_queues import SHARED_QUEUE
from worker.queues import backlog

log = logging.getLogger("agentq.worker")

HAND_BACK_WAIT_S = 5.0
"""Longest a stopping consumer waits for the waiting jobs to be sent again (the watchdog covers a slower send)."""
TICK_S = 0.01
"""How often the step looks at the lines: a full line's queue gives at most a tick's worth of messages more, and
a drained line's queue comes back within a tick."""


class AppQueues(bootsteps.StartStopStep):
    """Consume the host's app queues (``worker.config.run_queues``) and pause/resume them with its ``AppLimits``."""

    requires = {"celery.worker.consumer.tasks:Tasks"}

    def __init__(self, parent, **kwargs):
        super().__init__(parent, **kwargs)
        self._tick = None
        self._queues: dict[str, list[str | None]] = {}
        self._paused: set[str] = set()
        self._host = None
        self._marked_at = 0.0

    def start(self, c) -> None:
        from worker.running import host as worker_host

        host = worker_host.current()  # built and installed at worker_init (worker.worker_lifecycle)
        # the map its dispatcher sends with (AGENTQ_APP_QUEUES), so its reaper's re-sends come back here
        self._queues = dict(host.store.dispatcher.queues.queues_for(host.apps))
        self._queues[SHARED_QUEUE] = [*self._queues[SHARED_QUEUE], None]  # jobs whose app the sender did not say
        self._paused = set()
        for queue in self._queues:
            c.add_task_queue(queue)  # logged once by Celery: "Started consuming from ..."
        self._host = host
        self._marked_at = 0.0
        if not host.wait_for_claim:
            self._tick = c.timer.call_repeatedly(TICK_S, self._follow_lines, (c, host.admission))

    def stop(self, c) -> None:
        if self._tick is not None:
            self._tick.cancel()
            self._tick = None
            self._hand_back_waiting()

    def _hand_back_waiting(self) -> None:
        """The consumer stops (shutdown, or a broker reconnect): send the jobs waiting in the lines again now, for
        whichever worker is free, rather than leave them to the watchdog (which postpones them while their app is
        held back elsewhere)."""
        host = self._host
        jobs = host.admission.take_waiting()
        if not jobs or not host.loop.loop.is_running():
            return
        try:
            host.loop.submit(hand_back(host.store, jobs)).result(HAND_BACK_WAIT_S)
            log.info("handed back %d run jobs that waited for a slot", len(jobs))
        except Exception as exc:  # the watchdog sends them again later
            log.warning("run jobs that waited for a slot not handed back (the watchdog will): %r", exc)

    def _follow_lines(self, c, limits) -> None:
        consumer = c.task_consumer
        for queue, apps in self._queues.items():
            if queue in self._paused:
                if limits.lines_drained(apps):
                    consumer.add_queue(c.app.amqp.queues[queue])
                    consumer.consume()
                    self._paused.discard(queue)
                    log.debug("queue %s resumed", queue)
            elif limits.line_full(apps):
                consumer.cancel_by_queue(queue)
                self._paused.add(queue)
                log.debug("queue %s paused: a line of %s is full", queue, apps)
        now = time.monotonic()
        if self._paused and now - self._marked_at >= backlog.MARK_EVERY_S:
            self._marked_at = now  # the reapers postpone these apps' unclaimed jobs rather than re-send them
            held = {app for queue in self._paused for app in self._queues[queue] if limits.waiting(app)}
            self._host.loop.submit(backlog.mark(self._host.store, held))


async def hand_back(store, jobs: list) -> None:
    """Send ``jobs`` (``(invocation_id, where)``) again, to their apps' queues, in one batch per queue."""
    from worker.records.store import Where

    for invocation_id, where in jobs:
        if where:
            store.remember(invocation_id, Where(app=where[0], user=where[1], session=where[2]))
    await asyncio.gather(*[store.dispatch_next(invocation_id) for invocation_id, _ in jobs])


def consume_app_queues(celery_app) -> None:
    """Add the AppQueues step to ``celery_app``'s workers (``agentq worker`` and ``celery -A worker.celery_main``)."""
    celery_app.steps["consumer"].add(AppQueues)
