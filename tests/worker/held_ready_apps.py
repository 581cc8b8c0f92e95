"""A worker held between starting and announcing itself: imported by ``agentq worker`` (as an app module), it
connects a ``worker_ready`` receiver before agentq's own, which waits until the test sets ``READY_GATE``.

Meanwhile the worker's host runs and beats (it is alive), but its apps are not in ``keys.workers()`` yet: the
window a deployment goes through on every worker start (the demo's first invocations arrive in it).
"""

from __future__ import annotations

import os
import time

from celery import signals

from runtime.redis_store.redis_url import redis_client_from_url

from .apps import approval_app

READY_GATE = "test:held-ready:go"
"""Set this key to let the worker announce itself."""

app = approval_app


@signals.worker_ready.connect(weak=False)
def _hold_until_let_go(**_kwargs) -> None:
    with redis_client_from_url(os.environ["AGENTQ_REDIS_URL"], asyncio=False) as client:
        while not client.exists(READY_GATE):
            time.sleep(0.02)
