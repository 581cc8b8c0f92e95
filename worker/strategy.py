"""The run task's Celery strategy: hand the job to this process's loop straight from the message.

Celery's default strategy builds a Request, passes it to the pool and traces the call (signals, state, result
handling); for the run task, which only hands an invocation id to the asyncio loop and returns, that machinery
cost more than the hand-off itself, on the path between a job's arrival and its claim. This strategy decodes the
message, calls the task, acknowledges the message afterwards (late, as the task's ``acks_late`` asks) and sends
the same task events (received, started, succeeded or failed) so Flower and ``celery events`` see every job.
"""

from __future__ import annotations

import logging
import time
import traceback

log = logging.getLogger("agentq.worker")


def handoff(task, app, consumer, **_options):
    """Celery calls this once per worker to get the task's message handler."""
    eventer = consumer.event_dispatcher
    send = eventer.send if eventer is not None and eventer.enabled and task.send_events else None
    errors = consumer.connection_errors  # the ack/reject promises log these instead of raising them

    def on_message(message, payload, ack, reject, callbacks, **_kwargs):
        headers = message.headers or {}
        task_id = headers.get("id")
        try:
            args, kwargs, _embed = message.decode()
        except Exception as exc:  # not a message this task can read: drop it, do not redeliver it forever
            log.error("run job %s: undecodable message dropped: %r", task_id, exc)
            reject(log, errors, False)
            return
        if send is not None:
            send("task-received", uuid=task_id, name=task.name, args=headers.get("argsrepr"),
                 kwargs=headers.get("kwargsrepr"), root_id=headers.get("root_id"),
                 parent_id=headers.get("parent_id"), retries=headers.get("retries", 0), eta=None, expires=None)
            send("task-started", uuid=task_id)
        started = time.monotonic()
        try:
            result = task.run(*args, **kwargs)
        except Exception as exc:
            # Acknowledged like any failed acks_late task: the dispatch watchdog re-sends the job if the
            # invocation was never claimed.
            log.exception("run job %s failed", task_id)
            if send is not None:
                send("task-failed", uuid=task_id, exception=repr(exc), traceback=traceback.format_exc())
            ack(log, errors)
            return
        if send is not None:
            send("task-succeeded", uuid=task_id, result=repr(result), runtime=time.monotonic() - started)
        ack(log, errors)

    return on_message
