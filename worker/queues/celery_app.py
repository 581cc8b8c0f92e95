"""The Celery app: Redis broker, late acks, requeue on worker loss, task events on for Flower.

How a worker process is arranged (chosen with bench/worker_bench.py; see the numbers in its results file):
one Celery consumer thread with the ``solo`` pool, plus one asyncio event loop thread (``worker.running.loop``) where
every invocation of the process runs. The run task is thin: it hands the invocation id to the loop and
returns, so pool threads would only add a thread handoff per job and buy nothing. The task goes through
Celery's own strategy, request and tracer, so revocation, rate limits, ``celery inspect``, the task signals
and the task events (Flower) work as for any Celery task. ``agentq worker`` and
``celery -A worker.celery_main worker`` run the same app (see ``worker.running.worker_lifecycle``).

Why these settings:
- ``task_acks_late`` + ``task_reject_on_worker_lost``: a message is acknowledged only after its task returned,
  i.e. after the invocation reached this process's loop (or was claimed, with ``--handoff claim``). A worker
  killed before that leaves the message to the broker. From the handoff on, Redis-side records bring the
  invocation back instead: the dispatch watchdog (``keys.dispatch_due``) re-sends a job whose invocation was
  not claimed within 5 s, and once claimed the heartbeated lease and the reapers resume it elsewhere within
  the lease TTL (5 s). Redis's visibility timeout is far too coarse for that and would also redeliver long
  invocations that are alive.
- ``visibility_timeout`` 300 s: only a backstop for messages reserved by a worker that died before running
  them; the watchdog re-sends unclaimed jobs after 5 s anyway, and duplicates are dropped harmlessly.
- ``worker_prefetch_multiplier`` 4: a run task takes microseconds and never waits for a slot (a job over the
  process's or its app's cap waits in its app's line, ``worker.queues.app_limits``), so a few reserved messages keep
  the consumer busy, and a flood of one app cannot fill the window in front of another app's message. A full
  line pauses its app's queue instead (``worker.running.queue_flow``), so the rest of a flood stays in the broker for
  other workers.
- ``queue_order_strategy`` ``round_robin`` (kombu's default, set so it stays): each app has its own run queue
  (``worker.config.run_queues``) and the Redis transport's ``BRPOP`` lists them with the one that last gave a message
  at the back, so a quiet app's job is taken next however long a busy app's queue is.
- ``task_ignore_result``: the invocation record is the result; there is no result backend.
- ``worker_send_task_events`` / ``task_send_sent_event``: Flower (and ``celery events``) see every job.
- ``worker_pool`` ``solo``: the default of ``celery worker`` too (``-P`` still overrides it).
"""

from __future__ import annotations

from celery import Celery

from worker.config.broker import kombu_broker
from worker.queues.dispatch import QUEUE

VISIBILITY_TIMEOUT_S = 300
PREFETCH_MULTIPLIER = 4


def make_celery(broker_url: str, *, main: str = "agentq") -> Celery:
    """A Celery app using ``broker_url`` (Redis, or Sentinel as in ``worker.config.broker``) as broker, configured as
    explained in the module docstring."""
    url, transport_options = kombu_broker(broker_url)
    app = Celery(main, broker=url, include=["worker.tasks"])
    app.conf.update(
        task_acks_late=True,
        task_reject_on_worker_lost=True,
        task_ignore_result=True,
        task_default_queue=QUEUE,
        task_serializer="json",
        accept_content=["json"],
        worker_prefetch_multiplier=PREFETCH_MULTIPLIER,
        broker_transport_options={"visibility_timeout": VISIBILITY_TIMEOUT_S, "queue_order_strategy": "round_robin",
                                  **transport_options},
        worker_pool="solo",
        broker_connection_retry_on_startup=True,
        worker_send_task_events=True,
        task_send_sent_event=True,
        worker_hijack_root_logger=False,
        worker_redirect_stdouts=False,
    )
    return app
