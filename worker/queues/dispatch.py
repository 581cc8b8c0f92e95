"""Sending run jobs: Celery tasks carrying invocation ids, on the run queue of the invocation's app.

A job is sent with ``send_task`` after the store committed the write that needs it (the record queued, a parked
invocation resumed). That write also registers the invocation with the dispatch watchdog (``keys.dispatch_due``,
``DISPATCH_GRACE_S``), so a process that dies between the commit and the send, or a broker that is down or
loses the message, only delays the job: a worker's reaper sends it again. Duplicates are harmless: the record
and the session lease decide who runs.

Each app's jobs go to its own queue, or its group's (``worker.config.run_queues``), so a flood of one app does not
queue in front of another's; a job whose app the sender does not know goes to the shared ``agentq`` queue,
which every worker consumes.

Jobs sent on one event loop while it runs one iteration go out together, one ``agentq.run_batch`` task per queue
(one ``agentq.run`` task when alone): under load, Celery's per-message cost (the publish, and a worker's receive,
events and ack) is paid per batch rather than per invocation; a lone job waits one loop iteration.

The publish itself (kombu's blocking round trips to the broker: the message, then the task-sent event) runs on
one thread of the Dispatcher's own, not on the event loop: an API process under load spent a third of its loop
waiting on those sockets, serving nothing meanwhile. One publish per loop is on its way at a time; jobs sent
while it is become the next batch, so batches grow with the load instead of the loop stalling once per batch.
"""

from __future__ import annotations

import asyncio
import logging
import os
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from worker.config.run_queues import SHARED_QUEUE, RunQueues

log = logging.getLogger("agentq.worker")

RUN_TASK = "agentq.run"
RUN_BATCH_TASK = "agentq.run_batch"
QUEUE = SHARED_QUEUE
DISPATCH_GRACE_S = 5.0
"""A run job not claimed this long after it was sent is sent again by a reaper (the broker lost it)."""


class Dispatcher:
    """Sends run jobs through a Celery app (by default one made for ``broker_url`` on first use), each to its
    app's queue in ``queues`` (by default read from ``AGENTQ_APP_QUEUES``)."""

    def __init__(self, celery_app: Any | None = None, *, broker_url: str | None = None,
                 queues: RunQueues | None = None):
        if celery_app is None and broker_url is None:
            raise ValueError("Dispatcher needs a celery_app or a broker_url")
        self._app = celery_app
        self.broker_url = broker_url
        self.queues = queues if queues is not None else RunQueues.from_env()
        self._batches: dict[asyncio.AbstractEventLoop, tuple[dict[str, list], asyncio.Future]] = {}
        """Per event loop: the jobs to publish next by queue, and the future their senders wait on."""
        self._publishing: set[asyncio.AbstractEventLoop] = set()
        """The loops whose previous batch is still being published: their next batch waits for it."""
        self._publisher: ThreadPoolExecutor | None = None
        """The one thread publishes run on (made on first use): kombu's connections are used from it alone."""
        self._publisher_pid = 0
        """The process that made ``_publisher``: a forked child (a prefork pool) has no such thread, so it makes
        its own."""

    @property
    def app(self) -> Any:
        """The Celery app jobs are sent through."""
        if self._app is None:
            from worker.queues.celery_app import make_celery

            self._app = make_celery(self.broker_url)
        return self._app

    async def send(self, invocation_id: str, where: list[str] | None = None) -> None:
        """Send the run job (``where``: the invocation's ``[app, user, session]``, which picks its queue and spares
        the worker a lookup); returns once the batch it went out in was published.

        The publish runs on the Dispatcher's thread, so the loop goes on serving meanwhile. A failed send is
        logged, not raised: the invocation is already committed, and the dispatch watchdog sends its job again.
        """
        loop = asyncio.get_running_loop()
        batch = self._batches.get(loop)
        if batch is None:
            batch = self._batches[loop] = ({}, loop.create_future())
            if loop not in self._publishing:  # else the publish on its way starts this batch when it is done
                loop.call_soon(self._start_publish, loop)
        queue = self.queues.queue_for(where[0] if where else None)
        batch[0].setdefault(queue, []).append([invocation_id, where] if where else [invocation_id])
        await asyncio.shield(batch[1])  # a cancelled sender must not cancel the others' wait

    def _start_publish(self, loop: asyncio.AbstractEventLoop) -> None:
        """Hand the loop's pending batch to the publishing thread; when it is out, start the next one."""
        by_queue, published = self._batches.pop(loop)
        self._publishing.add(loop)
        if self._publisher is None or self._publisher_pid != os.getpid():
            self._publisher = ThreadPoolExecutor(max_workers=1, thread_name_prefix="agentq-dispatch")
            self._publisher_pid = os.getpid()
        sending = loop.run_in_executor(self._publisher, self._publish, by_queue)
        sending.add_done_callback(lambda _: self._published(loop, published))

    def _published(self, loop: asyncio.AbstractEventLoop, published: asyncio.Future) -> None:
        self._publishing.discard(loop)
        if not published.done():
            published.set_result(None)
        if loop in self._batches:  # sent while this batch was on its way
            self._start_publish(loop)

    def _publish(self, by_queue: dict[str, list]) -> None:
        """Publish one batch (on the publishing thread); a queue whose send fails is logged and left."""
        for queue, jobs in by_queue.items():
            try:
                if len(jobs) == 1:
                    self.app.send_task(RUN_TASK, args=jobs[0], queue=queue)
                else:
                    self.app.send_task(RUN_BATCH_TASK, args=[jobs], queue=queue)
            except Exception as exc:
                log.warning("run jobs of invocations %s not sent (the dispatch watchdog sends them again in %gs): "
                            "%r", [job[0] for job in jobs], DISPATCH_GRACE_S, exc)
