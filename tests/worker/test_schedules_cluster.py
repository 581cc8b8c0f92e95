"""Schedules on a real three-master Redis Cluster, fired by schedulers in this process (no workers: the runs stay
queued). Each user's schedules are due in their user's shard (``keys.schedules_due(shard)``), so the fire script
stays in one slot; the run's index entry is where a bare id is looked up, in the slot of the id."""

from __future__ import annotations

import asyncio
import time

import pytest

from runtime.redis_store import keys
from worker.client import AgentqClient
from worker.config.shards import in_use, shard_of
from worker.schedules import Scheduler
from worker.schedules.firing import due_member

APP = "weather"
USERS = ["ann", "bob", "cyd", "dee"]


@pytest.fixture
async def client(redis_cluster_url, broker, monkeypatch):
    monkeypatch.setenv("AGENTQ_BROKER_URL", broker.url)  # run jobs go there (no worker takes them here)
    client = AgentqClient(redis_cluster_url)
    yield client
    await client.aclose()


def due_set(user: str) -> str:
    return keys.schedules_due(shard_of(APP, user, cluster=True))


async def overdue_since(client, user: str, schedule_id: str, start: int) -> None:
    """Put the schedule back at its tick ``start`` (s), as if every scheduler had been down since then."""
    redis = client._store.redis
    await redis.hset(keys.schedule(APP, user, schedule_id), "next_tick", start * 1000)
    await redis.zadd(due_set(user), {due_member(APP, user, schedule_id): start * 1000})


async def anything_due(client) -> bool:
    redis = client._store.redis
    shards = await in_use(redis, cluster=True)
    return any([await redis.zrangebyscore(keys.schedules_due(shard), "-inf", time.time() * 1000) for shard in shards])


async def stray_index_entries(client, user: str, invocation_ids: list[str]) -> list[str]:
    """Runs indexed in their user's slot although a bare id is looked up in the slot of the id."""
    store = client._store
    script_index = keys.invocation_index(shard_of(APP, user, cluster=True))
    return [i for i in invocation_ids
            if store.index_key(i) != script_index and await store.redis.hexists(script_index, i)]


async def test_on_a_cluster_racing_schedulers_enqueue_every_overdue_tick_once_and_each_run_is_found_by_its_id(client):
    start = int(time.time()) - 5
    made = {}
    for user in USERS:  # users in different slots, so due sets in different shards
        schedule = await client.schedules.create(APP, user, {"intervalS": 1, "startAt": start, "missed": "all",
                                                             "newMessage": "tick"})
        await overdue_since(client, user, schedule.id, start)
        made[user] = schedule.id
    racing = [Scheduler(client._store, name=f"s{i}") for i in range(2)]
    for _ in range(100):
        if not await anything_due(client):
            break
        await asyncio.gather(*(scheduler.fire_due() for scheduler in racing))
    for user, schedule_id in made.items():
        runs = await client.schedules.runs(APP, user, schedule_id, limit=100)  # each found through its index entry
        ticks = sorted(int(score) for _, score in await client._store.redis.zrange(
            keys.schedule_runs(APP, user, schedule_id), 0, -1, withscores=True))
        assert ticks == list(range(start * 1000, ticks[-1] + 1, 1000)) and len(ticks) >= 6
        assert ({(r.schedule_id, r.status) for r in runs}, len(runs)) == ({(schedule_id, "queued")}, len(ticks))
        assert await stray_index_entries(client, user, [r.id for r in runs]) == []
    counted = [(await client.schedules.get(APP, user, schedule_id)).runs for user, schedule_id in made.items()]
    assert sum(scheduler.fired for scheduler in racing) == sum(counted)


async def test_on_a_cluster_a_schedule_is_triggered_paused_resumed_and_deleted(client):
    made = await client.schedules.create(APP, "ann", {"intervalS": 60, "newMessage": "hi"}, schedule_id="a")
    member = due_member(APP, "ann", "a")
    assert await client._store.redis.zscore(due_set("ann"), member) is not None
    invocation_id = await client.schedules.trigger(APP, "ann", "a")
    record = await client.get(invocation_id)
    assert (record.schedule_id, record.status) == ("a", "queued")
    assert await stray_index_entries(client, "ann", [invocation_id]) == []
    await client.schedules.pause(APP, "ann", "a")
    assert await client._store.redis.zscore(due_set("ann"), member) is None
    resumed = await client.schedules.resume(APP, "ann", "a")
    assert resumed.next_run_at >= made.next_run_at - 1
    assert await client._store.redis.zscore(due_set("ann"), member) is not None
    await client.schedules.delete(APP, "ann", "a")
    assert await client._store.redis.zscore(due_set("ann"), member) is None
