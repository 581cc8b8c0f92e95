"""Real worker processes (``agentq worker``) on a private redis-server for this package's tests."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from runtime.redis_store import keys
from runtime.redis_store.launcher import EmbeddedRedis

ROOT = Path(__file__).resolve().parents[2]
APPS = ",".join(f"tests.worker.apps:{name}" for name in (
    "approval_app", "two_calls_app", "slow_app", "weather_app", "flaky_app", "broken_app", "risky_app",
    "idempotent_app", "guarded_app", "asking_app", "plugged_app", "compacting_app")) + "," + ",".join(
    f"tests.worker.workflow_apps:{name}" for name in (
        "chain_app", "review_app", "fan_app", "retry_app", "exhausted_app", "items_app", "payer_app")) + "," + ",".join(
    f"tests.worker.fair_apps:{name}" for name in ("flood_app", "quick_app"))


READY_TIMEOUT_S = 180.0
"""How long ``WorkerPool.ensure`` waits for its workers to announce themselves."""


class WorkerPool:
    """Named ``agentq worker`` processes; ``ensure`` (re)starts any that are not running.

    ``broker_url``: a broker apart from the store (``AGENTQ_BROKER_URL``; a store on a Redis Cluster needs one)."""

    def __init__(self, redis_url: str, log_dir: Path, *, broker_url: str | None = None):
        self.redis_url = redis_url
        self.broker_url = broker_url
        self.log_dir = log_dir
        self.processes: dict[str, subprocess.Popen] = {}

    def env(self) -> dict[str, str]:
        broker = {"AGENTQ_BROKER_URL": self.broker_url} if self.broker_url else {}
        return {**os.environ, "AGENTQ_REDIS_URL": self.redis_url, "AGENTQ_APPS": APPS, "PYTHONPATH": str(ROOT),
                **broker}

    def admin(self):
        """A plain (sync) redis-py client on the store, a Sentinel URL's current master included."""
        from runtime.redis_store.redis_url import redis_client_from_url

        return redis_client_from_url(self.redis_url, asyncio=False)

    def start(self, name: str) -> subprocess.Popen:
        with self.admin() as client:
            client.hdel(keys.workers(), name)
        log = open(self.log_dir / f"{name}.log", "ab")  # noqa: SIM115 (closed with the process)
        process = subprocess.Popen(
            [sys.executable, "-m", "agentq.cli", "--log-level", "INFO", "worker", "--name", name],
            cwd=ROOT, env=self.env(), stdout=log, stderr=subprocess.STDOUT,
        )
        self.processes[name] = process
        return process

    def ensure(self, *names: str) -> None:
        for name in names:
            process = self.processes.get(name)
            if process is None or process.poll() is not None:
                self.start(name)
        # Generous: under `make test` several test processes start their workers at the same moment, and a
        # worker's imports on a loaded 2-core machine took over 60 s (seen: "workers did not get ready").
        deadline = time.monotonic() + READY_TIMEOUT_S
        with self.admin() as client:
            while not all(client.hexists(keys.workers(), name) for name in names):
                for name in names:
                    if self.processes[name].poll() is not None:
                        raise RuntimeError(f"worker {name!r} exited: {(self.log_dir / f'{name}.log').read_text()}")
                assert time.monotonic() < deadline, "workers did not get ready"
                time.sleep(0.05)

    def kill(self, name: str) -> None:
        process = self.processes[name]
        process.send_signal(signal.SIGKILL)
        process.wait()

    def stop_all(self) -> None:
        for process in self.processes.values():
            if process.poll() is None:
                process.terminate()
        for process in self.processes.values():
            try:
                process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


@pytest.fixture(scope="module")
def broker(tmp_path_factory):
    """A plain redis-server as the Celery broker of a module's store on the Redis Cluster (a Cluster cannot be
    one); in the modules without workers nothing takes its jobs."""
    with EmbeddedRedis(tmp_path_factory.mktemp("cluster-broker"), appendonly=False) as server:
        yield server


@pytest.fixture
async def cluster_store(redis_cluster_url, broker, monkeypatch):
    """An InvocationStore on the shared Redis Cluster, its run jobs sent to ``broker``."""
    from worker.records.store import InvocationStore

    monkeypatch.setenv("AGENTQ_BROKER_URL", broker.url)
    store = InvocationStore(redis_cluster_url)
    yield store
    await store.aclose()


@pytest.fixture(scope="package")
def worker_redis(tmp_path_factory):
    """A redis-server only this package's worker processes use (never flushed while they run)."""
    server = EmbeddedRedis(tmp_path_factory.mktemp("worker-redis"))
    server.start()
    yield server
    server.stop()


@pytest.fixture(scope="package")
def worker_pool(worker_redis, tmp_path_factory):
    pool = WorkerPool(worker_redis.url, tmp_path_factory.mktemp("worker-logs"))
    yield pool
    pool.stop_all()


@pytest.fixture
def workers(worker_pool):
    """Two running workers, w1 and w2 (restarted if a test killed one)."""
    worker_pool.ensure("w1", "w2")
    return worker_pool


@pytest.fixture
async def client(worker_redis, monkeypatch):
    from worker.client import AgentqClient

    monkeypatch.setenv("AGENTQ_REDIS_URL", worker_redis.url)  # for the test apps' side-effect counters
    client = AgentqClient(worker_redis.url)
    yield client
    await client.aclose()


@pytest.fixture
def user() -> str:
    """A user id no other test uses, so tests share the redis-server without seeing each other."""
    return "u-" + uuid.uuid4().hex[:8]


def _underflows(url: str) -> int:
    """Status counts below zero on one node, every scope's (users' too), plus the previous layout's
    ``!underflows`` (worker.records.status_counts)."""
    import redis

    from worker.records.status_counts import UNDERFLOWS, every_scope_below_zero

    client = redis.Redis.from_url(url, decode_responses=True)
    try:
        fields = client.hgetall(keys.status_counts())
        return len(every_scope_below_zero(fields)) + int(fields.get(UNDERFLOWS) or 0)
    finally:
        client.close()


@pytest.fixture(autouse=True)
def no_status_count_goes_below_zero(request):
    """Fails the test during which a status count went below zero (a transition from a status the invocation
    was never counted in: a bug, never a silent one), in any scope, on the package's redis-server or the shared
    one."""
    urls = []
    if "worker_redis" in request.fixturenames:
        urls.append(request.getfixturevalue("worker_redis").url)
    if "redis_url" in request.fixturenames:
        urls.append(request.getfixturevalue("redis_url"))
    before = {url: _underflows(url) for url in urls}
    yield
    for url in urls:
        grown = _underflows(url) - before[url]
        assert grown == 0, f"{grown} status count(s) would have gone below zero on {url!r} (see its Redis log)"
