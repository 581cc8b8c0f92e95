"""The anchor for the durable benchmark: a no-op Celery task on the same broker and the same Celery settings.

The task only INCRs a counter, so the benchmark can see when every message was consumed (no result backend).
"""

from __future__ import annotations

import os

import redis

from worker.queues.celery_app import make_celery

app = make_celery(os.environ["AGENTQ_REDIS_URL"], main="noop")
_client = redis.Redis.from_url(os.environ["AGENTQ_REDIS_URL"])


@app.task(name="bench.noop", ignore_result=True)
def noop() -> None:
    """Count one consumed message."""
    _client.incr("bench:noop_done")
