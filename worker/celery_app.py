"""The Celery app: Redis broker, late acks, requeue on worker loss, task events on for Flower.

Why these settings:
- ``task_acks_late`` + ``task_reject_on_worker_lost``: a run job is acknowledged only after the invocation is
  durably claimed (its record says running and its session lease is held and heartbeated), so a worker killed
  before that point leaves the message to be redelivered. After that point the lease and the reaper, not the
  broker, bring the invocation back (within the lease TTL, 5 s by default), because Redis's visibility timeout
  is coarse and would redeliver long invocations that are still alive.
- ``visibility_timeout`` 300 s: only a backstop for messages taken by a worker that died before claiming; the
  reapers' dispatch watchdog re-sends unclaimed jobs after 5 s anyway, and a duplicate is harmless.
- ``worker_prefetch_multiplier`` 4: a job holds a pool thread only while it is claimed (well under a
  millisecond), so a few reserved messages per thread keep the pool busy without hoarding work that another
  worker could start.
- ``task_ignore_result``: the invocation record is the result; no result backend.
"""

from __future__ import annotations

from celery import Celery

from .dispatch import QUEUE

VISIBILITY_TIMEOUT_S = 300
PREFETCH_MULTIPLIER = 4


def make_celery(redis_url: str, *, main: str = "agentq") -> Celery:
    """A Celery app using ``redis_url`` as broker, configured as explained in the module docstring."""
    app = Celery(main, broker=redis_url, include=["worker.tasks"])
    app.conf.update(
        task_acks_late=True,
        task_reject_on_worker_lost=True,
        task_ignore_result=True,
        task_default_queue=QUEUE,
        task_serializer="json",
        accept_content=["json"],
        worker_prefetch_multiplier=PREFETCH_MULTIPLIER,
        broker_transport_options={"visibility_timeout": VISIBILITY_TIMEOUT_S},
        broker_connection_retry_on_startup=True,
        worker_send_task_events=True,
        task_send_sent_event=True,
        worker_hijack_root_logger=False,
        worker_redirect_stdouts=False,
    )
    return app
