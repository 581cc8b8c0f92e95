"""Fairness with real processes: a run queue per app, consumed in turn, and per-app caps that hold a flood back
without holding up another app (worker.config.run_queues, worker.queues.app_limits, worker.running.queue_flow).

Each test runs its own redis-server and ``agentq worker`` (so the flood and its queue are nobody else's). The
``flood`` app's model holds its invocations until the test opens a gate, so the flood keeps every slot it gets;
the ``quick`` app answers at once. Latencies are printed, never asserted (bench/fairness_bench.py measures them).
"""

from __future__ import annotations

import asyncio
import base64
import json
import statistics
import time
import uuid
from collections import Counter

import pytest

from runtime.redis_store import keys
from runtime.redis_store.launcher import EmbeddedRedis
from tests.worker.conftest import WorkerPool
from tests.worker.fair_apps import GATE_KEY
from worker.config.run_queues import RunQueues
from worker.queues.dispatch import DISPATCH_GRACE_S, RUN_BATCH_TASK

FLOOD = 2_000
"""bench/fairness_bench.py floods with 10,000; the property is the same with fewer, in less time."""
ENQUEUE_WINDOW = 200


@pytest.fixture
def stack(tmp_path, monkeypatch):
    """A private redis-server, and a WorkerPool on it whose workers get the environment the test sets."""
    server = EmbeddedRedis(tmp_path / "redis")
    server.start()
    monkeypatch.setenv("AGENTQ_REDIS_URL", server.url)
    pool = WorkerPool(server.url, tmp_path)
    yield pool
    pool.stop_all()
    server.stop()


async def enqueue_many(client, app: str, user: str, count: int, window: int = ENQUEUE_WINDOW) -> list[str]:
    """``count`` invocations of ``app``, each on a session of its own (so each is its session's head and its run
    job goes to the broker at once), ``window`` at a time (jobs sent together go out as one batch message)."""
    gate = asyncio.Semaphore(window)

    async def one(index: int) -> str:
        async with gate:
            session = await client.create_session(app, user)
            return await client.enqueue(app, user, session.id, f"flood #{index}")

    return await asyncio.gather(*[one(index) for index in range(count)])


async def statuses(client, app: str, user: str, invocation_ids: list[str]) -> Counter:
    pipe = client._store.redis.pipeline(transaction=False)
    for invocation_id in invocation_ids:
        pipe.hget(keys.invocation(app, user, invocation_id), "status")
    return Counter(await pipe.execute())


async def statuses_once(client, app: str, user: str, invocation_ids: list[str], running: int) -> Counter:
    """The statuses once ``running`` of them run (a freed slot's next job is claimed a moment later), or as they
    are after 30 s."""
    deadline = time.monotonic() + 30
    while True:
        counts = await statuses(client, app, user, invocation_ids)
        if counts["running"] >= running or time.monotonic() > deadline:
            return counts
        await asyncio.sleep(0.05)


async def jobs_in_queue(client, queue: str) -> list[str]:
    """The invocation ids of the run jobs waiting in a broker queue, a re-sent one as often as it was sent (read,
    not taken: LRANGE of kombu's list)."""
    ids: list[str] = []
    for raw in await client._store.redis.lrange(queue, 0, -1):
        message = json.loads(raw)
        args = json.loads(base64.b64decode(message["body"]))[0]
        jobs = args[0] if message["headers"]["task"] == RUN_BATCH_TASK else [args]
        ids.extend(job[0] for job in jobs)
    return ids


async def jobs_in_broker_once_one_is_taken(client, queue: str, invocation_ids: set[str]) -> set[str]:
    """The jobs in the broker queue once at least one of ``invocation_ids`` has left it (taken by a worker), or as
    they are after 30 s."""
    deadline = time.monotonic() + 30
    while True:
        in_broker = set(await jobs_in_queue(client, queue))
        if not invocation_ids <= in_broker or time.monotonic() > deadline:
            return in_broker
        await asyncio.sleep(0.05)


async def quick_first_event(client, user: str) -> tuple[float, str]:
    """Seconds from enqueue to the quick agent's first event, and the invocation's final status."""
    session = await client.create_session("quick", user)
    start = time.perf_counter()
    invocation_id = await client.enqueue("quick", user, session.id, "now, please")
    first = None
    async for entry in client.events(invocation_id):
        if first is None and entry.kind == "event" and entry.data.get("author") == "quick_agent":
            first = time.perf_counter() - start
    return first, (await client.get(invocation_id)).status


async def quick_latencies(client, user: str, samples: int) -> list[float]:
    latencies = []
    for _ in range(samples):
        latency, status = await quick_first_event(client, user)
        assert status == "completed"
        latencies.append(latency)
    return latencies


@pytest.mark.timeout(180)
async def test_a_flood_of_one_app_holds_only_its_cap_and_another_app_completes_while_the_flood_is_queued(
        stack, monkeypatch):
    from worker.client import AgentqClient

    monkeypatch.setenv("AGENTQ_CONCURRENCY", "16")  # without the flood's cap, the flood would fill the process
    monkeypatch.setenv("AGENTQ_APP_CONCURRENCY", "flood=4")
    stack.ensure("fair-w1")
    client = AgentqClient(stack.redis_url)
    user = "u-" + uuid.uuid4().hex[:8]
    try:
        idle = await quick_latencies(client, user, 20)
        started = time.monotonic()
        flood = await enqueue_many(client, "flood", user, FLOOD)
        print(f"\n{FLOOD} flood invocations enqueued in {time.monotonic() - started:.1f}s")
        during = await quick_latencies(client, user, 20)
        # past the dispatch grace (and a reaper pass or two), the watchdog has looked at the waiting jobs
        await asyncio.sleep(max(0.0, started + DISPATCH_GRACE_S + 2.5 - time.monotonic()))
        flood_statuses = await statuses_once(client, "flood", user, flood, running=4)
        in_broker = await jobs_in_queue(client, RunQueues().queue_for("flood"))
        idle_p50, during_p50 = statistics.median(idle), statistics.median(during)
        print(f"quick app, enqueue -> first agent event: idle p50 {idle_p50 * 1000:.2f} ms, during the flood p50 "
              f"{during_p50 * 1000:.2f} ms ({during_p50 / idle_p50:.2f}x); flood {dict(flood_statuses)}, "
              f"{len(set(in_broker))} of its run jobs still in the broker ({len(in_broker)} messages' jobs)")
        # every quick invocation above completed while the flood held exactly its cap and no more
        assert flood_statuses == Counter({"running": 4, "queued": FLOOD - 4})
        # the flood stayed in the broker (for other workers), not pulled into this worker's memory
        assert len(set(in_broker) & set(flood)) >= FLOOD * 0.9
        # and the reapers postponed its unclaimed jobs (worker.backlog) instead of re-sending them behind themselves
        assert len(in_broker) == len(set(in_broker))
    finally:
        await client._store.redis.set(GATE_KEY, "1")
        await client.aclose()


@pytest.mark.timeout(120)
async def test_a_worker_takes_the_apps_queues_in_turn_so_a_quick_job_behind_a_queued_flood_runs_first(
        stack, monkeypatch):
    """kombu's Redis transport round-robins between the queues: with the flood queued before the worker starts
    and room for 3 invocations, the quick job is among the first three taken (in a single FIFO queue, or queues
    taken in fixed order, it would wait behind all 200 held flood jobs and never run). One message per flood job:
    a batch message hands the worker all its jobs at once, and with no cap the flood would then take every slot."""
    from worker.client import AgentqClient

    monkeypatch.setenv("AGENTQ_CONCURRENCY", "3")
    monkeypatch.delenv("AGENTQ_APP_CONCURRENCY", raising=False)
    client = AgentqClient(stack.redis_url)
    user = "u-" + uuid.uuid4().hex[:8]
    try:
        flood = await enqueue_many(client, "flood", user, 200, window=1)  # one message per job
        session = await client.create_session("quick", user)
        quick = await client.enqueue("quick", user, session.id, "now, please")
        stack.ensure("fair-w2")
        record = await client.wait(quick, timeout=60)
        flood_statuses = await statuses_once(client, "flood", user, flood, running=3)
        print(f"\nquick {record.status}; flood {dict(flood_statuses)}")
        assert (record.status, flood_statuses) == ("completed", Counter({"running": 3, "queued": 197}))
    finally:
        await client._store.redis.set(GATE_KEY, "1")
        await client.aclose()


@pytest.mark.timeout(120)
async def test_a_worker_stopping_sends_the_jobs_waiting_in_its_lines_back_to_the_broker(stack, monkeypatch):
    """A waiting job's message was acknowledged; a worker that stops gracefully sends it again at once (and its
    running invocation is handed back as before), so nothing is left for the watchdog, which would postpone it
    while another worker holds the app back."""
    from worker.client import AgentqClient

    monkeypatch.setenv("AGENTQ_APP_CONCURRENCY", "flood=1")
    stack.ensure("fair-w3")
    client = AgentqClient(stack.redis_url)
    user = "u-" + uuid.uuid4().hex[:8]
    try:
        flood = await enqueue_many(client, "flood", user, 5, window=1)
        waiting = await statuses_once(client, "flood", user, flood, running=1)
        queue = RunQueues().queue_for("flood")
        pipe = client._store.redis.pipeline(transaction=False)
        for invocation_id in flood:
            pipe.hget(keys.invocation("flood", user, invocation_id), "status")
        queued = {i for i, status in zip(flood, await pipe.execute(), strict=True) if status == "queued"}
        # the worker takes the next job into its line a moment after the first one runs: wait for that
        in_broker_before = await jobs_in_broker_once_one_is_taken(client, queue, queued)
        # keep the watchdog out of it: only the stopping worker may put the waiting jobs back
        await client._store.redis.zadd(keys.dispatch_due(), {i: int((time.time() + 3600) * 1000) for i in queued},
                                       xx=True)
        process = stack.processes["fair-w3"]
        process.terminate()
        await asyncio.to_thread(process.wait, 60)
        in_broker_after = set(await jobs_in_queue(client, queue))
        print(f"\nflood {dict(waiting)}; queued jobs in the broker before the stop {len(queued & in_broker_before)}, "
              f"after {len(queued & in_broker_after)} (of {len(queued)})")
        # some queued jobs were in the worker's line, not in the broker; once it stopped, every one is back there
        assert (waiting, queued <= in_broker_before, queued <= in_broker_after) == (
            Counter({"running": 1, "queued": 4}), False, True)
    finally:
        await client._store.redis.set(GATE_KEY, "1")
        await client.aclose()
