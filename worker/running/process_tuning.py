"""tune_worker_process(): the process-wide settings a worker runs with, set in one place.

Called once a worker process has built its WorkerHost, by every way a worker starts (``agentq worker`` and
``celery -A worker.celery_main worker`` through ``worker.running.worker_lifecycle``; a plain Celery app's first run job
through ``worker.running.host.current``). They change the whole interpreter, which is why a library must not set them on
import, and why they sit here rather than hidden in a constructor.
"""

from __future__ import annotations

import gc
import os
import sys

SWITCH_INTERVAL_S = float(os.environ.get("AGENTQ_SWITCH_INTERVAL", "0.0005"))
"""The GIL switch interval: Celery's threads and the loop thread hand work to each other many times per
invocation; with CPython's default 5 ms each hand-off can wait milliseconds behind a busy thread."""

GC_THRESHOLDS = (50_000, 50, 1000)
"""Collector thresholds (CPython's default is 700, 10, 10): a worker allocates a few thousand short-lived objects
per event, so with the defaults the collector ran many times per invocation and re-scanned every live session and
pydantic object each time (about a quarter of the worker's CPU in bench/worker_bench.py)."""


def tune_worker_process() -> None:
    """Set the GIL switch interval, freeze what exists now (modules, apps, runners) out of the collector's scans
    for good, and collect less often. Call it after the worker's host is built."""
    sys.setswitchinterval(SWITCH_INTERVAL_S)
    gc.collect()
    gc.freeze()
    gc.set_threshold(*GC_THRESHOLDS)
