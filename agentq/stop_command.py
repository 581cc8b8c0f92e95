"""``agentq stop``: end what ``agentq`` started on the embedded redis-server of your data directory: its api and worker processes (SIGTERM, so a
worker hands its running invocations back), then the embedded redis-server (which saves its AOF first).

Nothing is lost: the data stays under ``<data dir>/redis`` and the next ``agentq`` command starts it again.
"""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

from agentq.embedded import live_users, shutdown
from worker.config.local_redis import redis_dir, running_url

STOP_TIMEOUT_S = 30.0
"""How long the api and worker processes get to stop."""


def run(data_dir: str | os.PathLike) -> int:
    """Stop everything registered under ``data_dir``; 1 when a process would not stop in time."""
    data = Path(data_dir).resolve()
    users = live_users(data)
    for pid, command in sorted(users.items()):
        print(f"stopping agentq {command} (pid {pid})", flush=True)
        try:
            os.kill(pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
    deadline = time.monotonic() + STOP_TIMEOUT_S
    while live_users(data) and time.monotonic() < deadline:
        time.sleep(0.1)
    stuck = live_users(data)
    for pid, command in sorted(stuck.items()):
        print(f"agentq stop: agentq {command} (pid {pid}) did not stop within {STOP_TIMEOUT_S:.0f}s; "
              f"end it with: kill -9 {pid}", flush=True)
    if stuck:
        return 1
    url = running_url(data)
    if url is not None:
        shutdown(url)
        print(f"stopped the embedded redis-server at {url} (data kept in {redis_dir(data)})", flush=True)
    elif users:
        print(f"the embedded redis-server stopped with them (data kept in {redis_dir(data)})", flush=True)
    else:
        print(f"nothing to stop: no agentq api, worker or embedded redis-server runs from {data}", flush=True)
    return 0
