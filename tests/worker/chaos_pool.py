"""Worker processes serving ``tests.worker.chaos_apps`` on a redis-server of their own (the tests here kill
workers, drop connections and restart Redis: nothing another test uses)."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import time
from pathlib import Path

import httpx

from runtime.redis_store.availability import is_store_unavailable
from runtime.statuses import FINAL
from tests.worker.chaos_apps import APPS
from tests.worker.conftest import ROOT, WorkerPool


class ChaosPool(WorkerPool):
    """A WorkerPool whose workers serve the chaos apps, with extra environment (e.g. AGENTQ_MAX_ATTEMPTS)."""

    def __init__(self, redis_url: str, log_dir, **extra_env: str):
        super().__init__(redis_url, log_dir)
        self.extra_env = extra_env

    def env(self) -> dict[str, str]:
        return {**super().env(), "AGENTQ_APPS": APPS, **self.extra_env}

    def alive(self) -> list[str]:
        """The names of the workers still running."""
        return sorted(name for name, process in self.processes.items() if process.poll() is None)

    def logs(self) -> str:
        """Every worker's log so far."""
        return "".join(path.read_text(errors="replace") for path in sorted(self.log_dir.glob("*.log")))


def start_api(pool: ChaosPool, port: int, log_path: Path) -> subprocess.Popen:
    """An ``agentq api`` process serving the chaos apps on ``port``, with the pool's environment (same Redis);
    returns once its /health answers 200."""
    api = subprocess.Popen(
        [sys.executable, "-m", "agentq.cli", "api", "--port", str(port), *[a for spec in APPS.split(",")
                                                                              for a in ("--app", spec)]],
        cwd=ROOT, env=pool.env(), stdout=open(log_path, "ab"), stderr=subprocess.STDOUT)  # noqa: SIM115
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        assert api.poll() is None, f"the API exited: {log_path.read_text()}"
        try:
            if httpx.get(f"http://127.0.0.1:{port}/health", timeout=1).status_code == 200:
                return api
        except httpx.HTTPError:
            pass
        time.sleep(0.1)
    api.kill()
    api.wait()
    raise AssertionError("the API did not get ready")


def stop_api(api: subprocess.Popen) -> None:
    """Stop an API process started by ``start_api``."""
    api.terminate()
    try:
        api.wait(timeout=15)
    except subprocess.TimeoutExpired:
        api.kill()
        api.wait()


async def settle_all(client, invocation_ids: list[str], timeout: float = 90.0) -> dict[str, str]:
    """Each invocation's final status, polling through dropped connections, a Redis restart or a failover."""
    statuses: dict[str, str] = {}
    deadline = time.monotonic() + timeout
    while len(statuses) < len(invocation_ids):
        if time.monotonic() >= deadline:
            raise AssertionError(f"not settled: {await _unsettled_records(client, set(invocation_ids) - set(statuses))}")
        for invocation_id in invocation_ids:
            if invocation_id in statuses:
                continue
            try:
                record = await client.get(invocation_id)
            except Exception as exc:
                if not is_store_unavailable(exc):
                    raise
                break
            if record.status in FINAL:
                statuses[invocation_id] = record.status
        await asyncio.sleep(0.1)
    return statuses


async def _unsettled_records(client, invocation_ids: set[str]) -> dict[str, dict]:
    """Each unsettled invocation's record fields, so a failure says where it stopped."""
    records = {}
    for invocation_id in sorted(invocation_ids):
        try:
            store = client._store
            records[invocation_id] = await store.fields(store.record_key(invocation_id, await store.locate(invocation_id)))
        except Exception as exc:  # the diagnosis must not hide the failure
            records[invocation_id] = {"unreadable": repr(exc)}
    return records
