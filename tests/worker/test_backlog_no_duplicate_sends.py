"""A backlog queued before any worker starts is drained without duplicate run jobs (worker.queues.backlog): the
dispatch watchdog takes a job still waiting in the broker, or already claimed, for not lost; a job really gone
from the broker is still sent again.

Real processes: a private redis-server (the broker too), ``agentq worker`` processes started after the backlog
was queued. Every watchdog entry is made overdue at once, as if the workers had started long after the grace.
Run jobs sent after the workers started are counted by the server itself (LPUSH calls in INFO commandstats:
kombu's Redis transport sends each message with one LPUSH); claims by each record's ``attempts``.
"""

from __future__ import annotations

import asyncio

import pytest

from runtime.redis_store import keys
from runtime.redis_store.launcher import EmbeddedRedis
from worker.queues.backlog import postponed

from .conftest import WorkerPool

BACKLOG = 300


@pytest.fixture
def redis_server(tmp_path):
    server = EmbeddedRedis(tmp_path / "redis")
    server.start()
    yield server
    server.stop()


@pytest.fixture
def pool(redis_server, tmp_path, monkeypatch):
    # a model that thinks a little, so that the backlog is still running when the reapers make their passes
    monkeypatch.setenv("BENCH_MODEL_LATENCY", "0.3")
    (tmp_path / "logs").mkdir()
    pool = WorkerPool(redis_server.url, tmp_path / "logs")
    yield pool
    pool.stop_all()


@pytest.fixture
async def client(redis_server):
    from worker.client import AgentqClient

    client = AgentqClient(redis_server.url)
    yield client
    await client.aclose()


async def _queue(client, n: int) -> list[str]:
    sessions = [(await client.create_session("weather", "backlog")).id for _ in range(n)]
    return list(await asyncio.gather(*(client.enqueue("weather", "backlog", s, "Weather?") for s in sessions)))


async def _all_overdue_then_start(client, pool: WorkerPool) -> None:
    redis = client._store.redis
    overdue = await redis.zrange(keys.dispatch_due(), 0, -1)
    await redis.zadd(keys.dispatch_due(), dict.fromkeys(overdue, 0))  # as if the grace had long passed
    await redis.config_resetstat()
    pool.ensure("b1", "b2")


async def _sends_and_attempts(client, ids: list[str]) -> tuple[int, list[int]]:
    records = [await client.wait(invocation_id, timeout=120) for invocation_id in ids]
    assert [record.status for record in records] == ["completed"] * len(ids)
    stats = await client._store.redis.info("commandstats")
    return int(stats.get("cmdstat_lpush", {}).get("calls", 0)), [record.attempts for record in records]


async def test_a_backlog_queued_before_any_worker_started_is_drained_without_one_job_sent_again(client, pool):
    ids = await _queue(client, BACKLOG)
    await _all_overdue_then_start(client, pool)
    sends, attempts = await _sends_and_attempts(client, ids)
    assert (sends, attempts) == (0, [1] * BACKLOG)


async def test_a_job_removed_from_the_broker_is_sent_again_once_the_backlog_before_it_drained(client, pool):
    lost = (await _queue(client, 1))[0]
    await client._store.redis.delete(client._store.dispatcher.queues.queue_for("weather"))  # the broker lost it
    ids = await _queue(client, BACKLOG)
    await _all_overdue_then_start(client, pool)
    sends, attempts = await _sends_and_attempts(client, [lost, *ids])
    assert (sends, attempts) == (1, [1] * (BACKLOG + 1))


async def test_an_overdue_job_of_a_claimed_invocation_under_a_live_lease_is_not_taken_for_lost(client):
    from worker.fleet import lease

    store = client._store
    invocation_id = (await _queue(client, 1))[0]
    await store.redis.delete(store.dispatcher.queues.queue_for("weather"))  # taken from the broker
    assert not await postponed(store, invocation_id)  # neither waiting in the broker nor claimed: lost
    claim = await lease.acquire(store, invocation_id, "w-test")
    assert await postponed(store, invocation_id)
    await store.redis.delete(keys.session_lease(claim.where.app, claim.where.user, claim.where.session))
    assert not await postponed(store, invocation_id)  # its worker died before its first heartbeat
