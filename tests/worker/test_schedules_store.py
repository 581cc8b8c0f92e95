"""Schedules on a real redis-server, fired by schedulers in this process (no workers: the runs stay queued)."""

from __future__ import annotations

import asyncio
import time

import pytest

from runtime.errors import ConflictError, InvalidMessageError, UsageError
from runtime.redis_store import keys
from worker.client import AgentqClient
from worker.schedules import ScheduleNotFoundError, Scheduler
from worker.schedules.firing import due_member, fire
from worker.schedules.ticks import Step

APP, USER = "weather", "ann"


@pytest.fixture
async def client(redis_url):
    client = AgentqClient(redis_url)
    yield client
    await client.aclose()


async def schedule_keys(client) -> list[str]:
    return sorted(await client._store.redis.keys("agentq:*sch*") + await client._store.redis.keys("agentq:*schedule*"))


async def run_ticks(client, schedule_id: str) -> list[int]:
    """The ticks (ms) that enqueued a run, oldest first, from the schedule's runs list."""
    pairs = await client._store.redis.zrange(keys.schedule_runs(APP, USER, schedule_id), 0, -1, withscores=True)
    return [int(score) for _, score in pairs]


async def as_if_no_scheduler_ran_since(client, schedule_id: str, start: int) -> None:
    """Put the schedule back at its tick ``start`` (s), as if every scheduler had been down since then."""
    await client._store.redis.hset(keys.schedule(APP, USER, schedule_id), "next_tick", start * 1000)
    await client._store.redis.zadd(keys.schedules_due(), {due_member(APP, USER, schedule_id): start * 1000})


async def drain(client, schedulers: int) -> list[int]:
    """Let ``schedulers`` schedulers look at the due set at once until nothing is due; what each fired."""
    racing = [Scheduler(client._store, name=f"s{i}") for i in range(schedulers)]
    for _ in range(200):
        due = await client._store.redis.zrangebyscore(keys.schedules_due(), "-inf", time.time() * 1000)
        if not due:
            break
        await asyncio.gather(*(scheduler.fire_due() for scheduler in racing))
    return [scheduler.fired for scheduler in racing]


@pytest.mark.parametrize("bad", [
    {"cron": "not a cron", "newMessage": "hi"},
    {"cron": "* * * * *", "timezone": "Nowhere/Else", "newMessage": "hi"},
    {"intervalS": 0.2, "newMessage": "hi"},
    {"intervalS": 5, "startAt": 200, "endAt": 100, "newMessage": "hi"},
    {"intervalS": 5, "newMessage": {"parts": [{"functionCall": {"name": "pay"}}]}},
])
async def test_a_bad_schedule_is_refused_and_stores_nothing(client, bad):
    with pytest.raises((UsageError, InvalidMessageError)):
        await client.schedules.create(APP, USER, bad)
    assert await schedule_keys(client) == []


async def test_a_taken_id_is_a_conflict_and_the_first_schedule_stays(client):
    first = await client.schedules.create(APP, USER, {"intervalS": 60, "newMessage": "hi"}, schedule_id="daily")
    with pytest.raises(ConflictError, match="schedule 'daily' of user 'ann' in app 'weather' exists already"):
        await client.schedules.create(APP, USER, {"intervalS": 5, "newMessage": "other"}, schedule_id="daily")
    assert await client.schedules.get(APP, USER, "daily") == first


async def test_a_schedule_is_listed_paused_resumed_changed_and_deleted(client):
    made = await client.schedules.create(APP, USER, {"intervalS": 60, "newMessage": "hi"}, schedule_id="a")
    await client.schedules.create(APP, USER, {"cron": "0 7 * * *", "timezone": "Europe/Paris", "newMessage": "hi"},
                                  schedule_id="b")
    assert [s.id for s in (await client.schedules.page(APP, USER)).items] == ["a", "b"]
    paused = await client.schedules.pause(APP, USER, "a")
    assert (paused.paused, paused.next_run_at) == (True, None)
    assert await client._store.redis.zscore(keys.schedules_due(), due_member(APP, USER, "a")) is None
    resumed = await client.schedules.resume(APP, USER, "a")
    assert resumed.paused is False and resumed.next_run_at > made.next_run_at - 1
    changed = await client.schedules.update(APP, USER, "a", {"intervalS": None, "cron": "30 8 * * 1"})
    assert (changed.spec.cron, changed.spec.interval_s, changed.revision) == ("30 8 * * 1", None, 4)
    with pytest.raises(UsageError, match="unknown timezone 'Atlantis'"):
        await client.schedules.update(APP, USER, "a", {"timezone": "Atlantis"})
    assert await client.schedules.get(APP, USER, "a") == changed  # the refused change stored nothing
    await client.schedules.delete(APP, USER, "a")
    await client.schedules.delete(APP, USER, "b")
    assert await schedule_keys(client) == []
    with pytest.raises(ScheduleNotFoundError, match="schedule 'a' of user 'ann' in app 'weather' does not exist"):
        await client.schedules.pause(APP, USER, "a")


async def test_with_policy_all_four_racing_schedulers_enqueue_every_overdue_tick_once(client):
    start = int(time.time()) - 30
    made = await client.schedules.create(APP, USER, {"intervalS": 1, "startAt": start, "missed": "all",
                                                     "newMessage": "tick"})
    await as_if_no_scheduler_ran_since(client, made.id, start)
    fired = await drain(client, schedulers=4)
    ticks = await run_ticks(client, made.id)
    print(f"ticks fired per scheduler: {fired}")
    assert ticks == list(range(start * 1000, ticks[-1] + 1, 1000)) and len(ticks) >= 31
    assert sum(fired) == len(ticks)
    runs = await client.schedules.runs(APP, USER, made.id, limit=100)
    assert {(r.schedule_id, r.status) for r in runs} == {(made.id, "queued")}
    assert len({r.session_id for r in runs}) == len(runs)  # a new session per run


async def test_with_policy_latest_overdue_ticks_make_one_run_and_are_counted_as_missed(client):
    start = int(time.time()) - 30
    made = await client.schedules.create(APP, USER, {"intervalS": 1, "startAt": start, "newMessage": "tick"})
    await as_if_no_scheduler_ran_since(client, made.id, start)
    await drain(client, schedulers=2)
    after = await client.schedules.get(APP, USER, made.id)
    ticks = await run_ticks(client, made.id)
    assert len(ticks) == 1 and after.runs == 1 and after.missed == (ticks[0] - start * 1000) // 1000


async def test_with_policy_skip_overdue_ticks_make_no_run(client):
    start = int(time.time()) - 30
    made = await client.schedules.create(APP, USER, {"intervalS": 1, "startAt": start, "missed": "skip",
                                                     "newMessage": "tick"})
    await as_if_no_scheduler_ran_since(client, made.id, start)
    await drain(client, schedulers=2)
    after = await client.schedules.get(APP, USER, made.id)
    assert (await run_ticks(client, made.id), after.runs) == ([], 0) and after.missed >= 30


async def test_a_scheduler_holding_a_tick_read_before_a_pause_fires_nothing(client):
    made = await client.schedules.create(APP, USER, {"intervalS": 1, "newMessage": "tick"}, schedule_id="p")
    due_tick = round(made.next_run_at * 1000)
    await client.schedules.pause(APP, USER, "p")
    fired = await fire(client._store, made, expected_tick=due_tick,
                       move=Step(fire=due_tick, missed=0, next=due_tick + 1000))
    assert fired is None and await run_ticks(client, "p") == []
    assert await client._store.session_service.get_session(app_name=APP, user_id=USER,
                                                           session_id=f"p-{due_tick}") is None


async def test_a_trigger_runs_now_even_while_paused_in_the_schedules_session(client):
    await client.schedules.create(APP, USER, {"intervalS": 3600, "newMessage": "now", "sessionId": "home"},
                                  schedule_id="t")
    await client.schedules.pause(APP, USER, "t")
    invocation_id = await client.schedules.trigger(APP, USER, "t")
    record = await client.get(invocation_id)
    assert (record.schedule_id, record.session_id, record.status) == ("t", "home", "queued")
    assert record.new_message.parts[0].text == "now"
    assert [r.id for r in await client.schedules.runs(APP, USER, "t")] == [invocation_id]


async def test_a_tick_whose_session_was_deleted_is_consumed_and_says_why(client):
    made = await client.schedules.create(APP, USER, {"intervalS": 1, "newMessage": "x", "sessionId": "gone"})
    await client.delete_session(APP, USER, "gone")
    await asyncio.sleep(max(0.0, made.next_run_at - time.time()) + 0.05)
    await drain(client, schedulers=1)
    after = await client.schedules.get(APP, USER, made.id)
    assert (after.runs, after.last_error) == (0, "session does not exist")
    assert after.next_run_at > made.next_run_at
    with pytest.raises(UsageError, match="session 'gone' of schedule .* does not exist any more"):
        await client.schedules.trigger(APP, USER, made.id)


async def test_a_schedule_past_its_end_has_ended_and_is_not_due(client):
    now = time.time()
    made = await client.schedules.create(APP, USER, {"intervalS": 5, "startAt": now - 100, "endAt": now - 50,
                                                     "newMessage": "x"})
    assert (made.ended, made.next_run_at) == (True, None)
    assert await client._store.redis.zcard(keys.schedules_due()) == 0


async def test_a_reads_only_client_refuses_to_change_schedules_before_sending_anything(client, redis_url):
    await client.schedules.create(APP, USER, {"intervalS": 60, "newMessage": "x"}, schedule_id="r")
    async with AgentqClient(redis_url, reads_only=True) as reader:
        with pytest.raises(UsageError, match=r"AgentqClient.schedules.create: this client was made with reads_only"):
            await reader.schedules.create(APP, USER, {"intervalS": 60, "newMessage": "x"})
        with pytest.raises(UsageError, match=r"AgentqClient.schedules.trigger: "):
            await reader.schedules.trigger(APP, USER, "r")
        assert [s.id for s in (await reader.schedules.page(APP, USER)).items] == ["r"]
    assert (await client.schedules.get(APP, USER, "r")).runs == 0


async def test_a_run_keeps_its_session_from_expiring_as_an_enqueue_does(redis_url):
    from worker.records.codec import dumps
    from worker.records.retention import RetentionPolicy

    async with AgentqClient(redis_url, retention=RetentionPolicy(session_idle_s=3600)) as idle_client:
        await idle_client.schedules.create(APP, USER, {"intervalS": 60, "newMessage": "x", "sessionId": "kept"},
                                           schedule_id="k")
        member = dumps([APP, USER, "kept"])
        await idle_client._store.redis.zadd(keys.session_expiries(), {member: 0})  # as if it were about to expire
        await idle_client.schedules.trigger(APP, USER, "k")
        deadline = await idle_client._store.redis.zscore(keys.session_expiries(), member)
    assert abs(deadline / 1000 - (time.time() + 3600)) < 60
