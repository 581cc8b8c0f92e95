"""One measurement of `python -m bench scaleout`: a queue filled beforehand, then drained by N worker processes.

Two kinds of work, on the same broker: the `fast` one-tool agent (``bench.worker_apps:weather``, a fresh session
per invocation) run by ``agentq worker`` processes, and the anchor, a no-op Celery task (``bench.worker_noop``)
run by plain ``celery worker`` processes. The queue is filled before any worker starts; the window measured runs
from 10% done to 90% done (or from when the last worker is ready, if that is later: a worker's start costs CPU
the others would otherwise have), so neither the start nor the tail is in the figures.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path

from .scaleout_probe import read, window
from .scaleout_stores import Store

ROOT = Path(__file__).resolve().parents[1]
APP = "weather"
POLL_S = 0.02


def _log(label: str, index: int) -> Path:
    return Path(tempfile.gettempdir()) / f"bench-scaleout-{label}-{index}.log"


def lease_trouble(count: int) -> dict[str, int]:
    """How often the agentq workers' logs say a lease ran out: an overloaded loop missed its heartbeats and the
    reaper sent the run job again (``lease_expired``), or a worker found its lease taken (``lease_lost``). Not 0
    means the figures include work done twice."""
    text = "".join(_log("agentq", index).read_text(errors="replace") for index in range(count))
    return {"lease_expired": text.count("lease expired (worker gone?)"), "lease_lost": text.count("lease lost")}


def _env(store: Store, **extra: str) -> dict[str, str]:
    secret = os.environ.get("AGENTQ_WEBHOOK_SECRET") or "whsec_YmVuY2gtd2ViaG9vay1zZWNyZXQ="  # workers need one
    return {**os.environ, "AGENTQ_REDIS_URL": store.url, "AGENTQ_BROKER_URL": store.broker_url,
            "PYTHONPATH": str(ROOT), "AGENTQ_WEBHOOK_SECRET": secret, **extra}


@contextmanager
def processes(commands: list[list[str]], env: dict[str, str], label: str):
    """Start one process per command (output to a log file in the temp folder); stop them all at the end."""
    started = []
    for index, command in enumerate(commands):
        log = open(_log(label, index), "wb")  # noqa: SIM115
        started.append(subprocess.Popen(command, cwd=ROOT, env=env, stdout=log, stderr=log))
    try:
        yield started
    finally:
        for process in started:
            process.terminate()
        for process in started:
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


async def fill_agentq(store: Store, n: int) -> None:
    """Enqueue ``n`` invocations of the one-tool agent, each on a session of its own, no worker running."""
    from worker.client import AgentqClient

    os.environ["AGENTQ_BROKER_URL"] = store.broker_url  # the client sends the run jobs there
    async with AgentqClient(store.url) as client:
        user = f"so-{time.time_ns()}"
        gate = asyncio.Semaphore(200)

        async def one(index: int) -> None:
            async with gate:
                session = await client.create_session(APP, user)
                await client.enqueue(APP, user, session.id, f"Weather in Paris? #{index}")

        await asyncio.gather(*(one(index) for index in range(n)))


def fill_noop(store: Store, n: int) -> None:
    """Send ``n`` no-op tasks to the broker, no worker running."""
    import redis

    from worker.queues.celery_app import make_celery

    with redis.Redis.from_url(store.broker_url) as broker:
        broker.set("bench:noop_done", 0)
    app = make_celery(store.broker_url)
    with app.producer_or_acquire() as producer:
        for _ in range(n):
            app.send_task("bench.noop", queue="agentq", producer=producer)


def agentq_commands(names: list[str], concurrency: int | None) -> list[list[str]]:
    """``agentq worker`` command lines, one per name, serving the one-tool agent (``concurrency`` invocations in
    flight each; None: agentq's default)."""
    extra = [] if concurrency is None else ["--concurrency", str(concurrency)]
    return [[sys.executable, "-m", "agentq.cli", "--log-level", "WARNING", "worker", "--name", name, *extra,
             "--app", "bench.worker_apps:weather"] for name in names]


def noop_commands(count: int, threads: int = 4) -> list[list[str]]:
    """``celery worker`` command lines for the no-op anchor (the same Celery settings as agentq's)."""
    return [[sys.executable, "-m", "celery", "-A", "bench.worker_noop", "worker", "-P", "threads", "-c",
             str(threads), "-Q", "agentq", "--without-gossip", "--without-mingle", "-l", "WARNING",
             "-n", f"noop{index}-{time.time_ns()}@%h"] for index in range(count)]


async def _agentq_progress(store: Store, names: list[str]):
    """An async callable: (invocations completed, failed or cancelled; every worker registered yet)."""
    from runtime.redis_store import keys
    from runtime.redis_store.redis_url import redis_client_from_url
    from worker.records.status_counts import count_by_status

    client = redis_client_from_url(store.url, decode_responses=True)

    async def progress() -> tuple[int, bool]:
        counts = await count_by_status(client, cluster=store.cluster, apps=[APP])
        ready = all(await client.hmget(keys.workers(), names))
        return counts["completed"] + counts["failed"] + counts["cancelled"], ready

    return client, progress


async def _noop_progress(store: Store):
    import redis.asyncio as aioredis

    client = aioredis.Redis.from_url(store.broker_url)

    async def progress() -> tuple[int, bool]:
        return int(await client.get("bench:noop_done") or 0), True  # a worker's start shows as a slow start

    return client, progress


async def _watch(store: Store, pids: list[int], n: int, progress, timeout_s: float) -> dict:
    first = last = None
    deadline = time.monotonic() + timeout_s
    done = 0
    while done < n and time.monotonic() < deadline:
        done, ready = await progress()
        if first is None and ready and done >= 0.1 * n:
            first = read(store.servers, pids, done)
            start_fraction = done / n
        elif first is not None and last is None and done >= 0.9 * n:
            last = read(store.servers, pids, done)
        await asyncio.sleep(POLL_S)
    if first is None or last is None or last.done == first.done:
        raise RuntimeError(f"the drain of {n} on {store.kind!r} did not get from 10% to 90% in {timeout_s}s "
                           f"({done} done)")
    return {**window(first, last, store.servers), "n": n, "finished": done,
            "window_from": round(start_fraction, 3), "window_to": round(last.done / n, 3)}


async def _drain(store: Store, pids: list[int], n: int, make_progress, timeout_s: float) -> dict:
    client, progress = await make_progress
    try:
        return await _watch(store, pids, n, progress, timeout_s)
    finally:
        await client.aclose()


def drain_agentq(store: Store, workers: int, n: int, *, concurrency: int | None = None,
                 timeout_s: float = 600) -> dict:
    """Fill the queue with ``n`` invocations, then drain it with ``workers`` ``agentq worker`` processes."""
    asyncio.run(fill_agentq(store, n))
    names = [f"so-{time.time_ns()}-{index}" for index in range(workers)]
    with processes(agentq_commands(names, concurrency), _env(store), "agentq") as started:
        result = asyncio.run(_drain(store, [p.pid for p in started], n, _agentq_progress(store, names), timeout_s))
    return {**result, **asyncio.run(_outcomes(store)), **lease_trouble(workers)}


async def _outcomes(store: Store) -> dict[str, int]:
    """How the invocations ended (all ``completed`` unless something went wrong)."""
    from runtime.redis_store.redis_url import redis_client_from_url
    from worker.records.status_counts import count_by_status

    client = redis_client_from_url(store.url, decode_responses=True)
    try:
        counts = await count_by_status(client, cluster=store.cluster, apps=[APP])
    finally:
        await client.aclose()
    return {status: counts[status] for status in ("completed", "failed", "cancelled")}


def drain_noop(store: Store, workers: int, n: int, *, concurrency: int | None = None, timeout_s: float = 600) -> dict:
    """Fill the broker with ``n`` no-op tasks, then drain it with ``workers`` Celery worker processes
    (``concurrency`` is agentq's; the anchor's threads are always 4)."""
    fill_noop(store, n)
    env = _env(store, AGENTQ_REDIS_URL=store.broker_url)  # bench.worker_noop counts on its broker
    with processes(noop_commands(workers), env, "noop") as started:
        return asyncio.run(_drain(store, [p.pid for p in started], n, _noop_progress(store), timeout_s))
