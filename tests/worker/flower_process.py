"""A real Flower process against the workers' broker, for the tests that look at what Flower shows."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

from runtime.redis_store.launcher import free_port
from tests.worker.conftest import ROOT


@contextlib.contextmanager
def flower_running(redis_url: str, log_path: Path) -> Iterator[str]:
    """Run ``celery -A worker.celery_main flower`` on a free loopback port (its API without auth, its output in
    ``log_path``) and yield its base URL; stopped on exit."""
    port = free_port()
    env = {**os.environ, "AGENTQ_REDIS_URL": redis_url, "FLOWER_UNAUTHENTICATED_API": "true", "PYTHONPATH": str(ROOT)}
    with open(log_path, "wb") as log:
        process = subprocess.Popen(
            [sys.executable, "-m", "celery", "-A", "worker.celery_main", "flower", f"--port={port}",
             "--address=127.0.0.1"], cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
        try:
            yield f"http://127.0.0.1:{port}"
        finally:
            process.terminate()
            process.wait(timeout=15)
