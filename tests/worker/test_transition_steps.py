"""The shared Lua steps of the status transitions (``runtime/redis_store/lua/lib/enqueue_step.lua``,
``cancel_step.lua``), seen from the outside: a schedule's runs move the status counters as any enqueue does, a
session is cancelled in one step, and a cancelled invocation leaves the reaper nothing to send again.

Real ``agentq worker`` processes on the package's redis-server (conftest), except the reaper test, which drives
one reaper pass in this process against a real redis-server with a broker that records what is sent.
"""

from __future__ import annotations

from collections import Counter

import pytest

from runtime.redis_store import keys
from runtime.statuses import STATUSES
from worker.fleet import lease
from worker.fleet.reaper import reap_once
from worker.records.store import InvocationStore

from .test_lifecycle import RecordingCelery


async def _scanned_statuses(client, app: str, user: str) -> dict[str, int]:
    """The statuses of the user's records in the app, read from the records themselves (a SCAN of the keyspace)."""
    redis = client._store.redis
    records = [key async for key in redis.scan_iter(match="agentq:{*}:i:*", count=5000)
               if not key.endswith((":journal", ":settled"))]
    pipe = redis.pipeline(transaction=False)
    for key in records:
        pipe.hmget(key, "app_name", "user_id", "status")
    found = Counter(status for owner_app, owner, status in await pipe.execute() if (owner_app, owner) == (app, user))
    return {status: found[status] for status in STATUSES}


@pytest.mark.timeout(180)
async def test_three_triggered_schedule_runs_leave_the_status_counts_equal_to_the_records(workers, client, user):
    """fire.lua queued its invocation without the 'queued' count: after three runs the counters said queued -3."""
    schedule = await client.schedules.create("weather", user, {"intervalS": 3600, "newMessage": "Weather in Paris?"})
    runs = [await client.schedules.trigger("weather", user, schedule.id) for _ in range(3)]
    queued_counts = await client.ops.status_counts(["weather"], [user])
    records = [await client.wait(invocation_id, timeout=60) for invocation_id in runs]
    assert [record.status for record in records] == ["completed"] * 3
    assert [record.schedule_id for record in records] == [schedule.id] * 3
    counted = await client.ops.status_counts(["weather"], [user])
    assert (min(queued_counts.values()), counted) == (0, await _scanned_statuses(client, "weather", user))
    assert counted["completed"] == 3


async def _running(client, invocation_id: str) -> None:
    """Once the invocation runs and has committed its first event (its user message): a claim alone is not enough,
    a cancel right after it would stop the run before it committed anything."""
    async for entry in client.events(invocation_id):
        if entry.kind == "event":
            return
    raise AssertionError(f"invocation {invocation_id!r} settled without committing an event")


@pytest.mark.timeout(300)
async def test_cancelling_a_session_with_a_running_and_two_queued_invocations_commits_nothing_of_the_queued_ones(
        workers, client, user):
    """One cancel at a time handed the session to the next queued invocation when the running one was cancelled,
    and a worker committed its user message before its own cancel arrived. In one step, none of them runs."""
    for attempt in range(8):
        session = await client.create_session("slow", user)
        running = await client.enqueue("slow", user, session.id, f"take your time #{attempt}")
        queued = [await client.enqueue("slow", user, session.id, f"queued #{attempt}.{n}") for n in range(2)]
        await _running(client, running)
        cancelled = await client.cancel_session("slow", user, session.id, "stop everything")
        assert sorted(cancelled) == sorted([running, *queued])
        statuses = [(await client.wait(invocation_id, timeout=60)).status for invocation_id in [running, *queued]]
        events = (await client.session_service.get_session(app_name="slow", user_id=user, session_id=session.id)).events
        committed_by = {event.invocation_id for event in events}
        assert (statuses, committed_by & set(queued), running in committed_by) == (["cancelled"] * 3, set(), True)


@pytest.mark.timeout(60)
async def test_a_cancelled_invocation_is_never_sent_again_by_the_reaper(redis_url):
    """A cancel left the dispatch watchdog's entry of a queued invocation (and a heartbeat already under way wrote
    the lease entry of a running one again): ~5 s later the reaper sent their run jobs again."""
    celery = RecordingCelery()
    store = InvocationStore(redis_url, celery_app=celery)
    try:
        await store.create_session("app", "u", "s")
        running = await store.enqueue("app", "u", "s", "first", None, None)
        queued = await store.enqueue("app", "u", "s", "second", None, None)
        claim = await lease.acquire(store, running, "w", ttl_s=60)
        assert await lease.heartbeat(store, [claim]) == [True]
        await store.cancel(queued, "not needed")
        await store.cancel(running, "stop")
        due = {name: set(await store.redis.zrange(key, 0, -1)) for name, key in (
            ("dispatch_due", keys.dispatch_due()), ("lease_expiries", keys.lease_expiries()))}
        assert due == {"dispatch_due": set(), "lease_expiries": set()}
        # the worker's heartbeat in flight when the cancel came: its books add the lease entry again
        assert await lease.heartbeat(store, [claim]) == [False]
        await store.redis.zadd(keys.lease_expiries(), {running: 0})
        await store.redis.zadd(keys.dispatch_due(), {queued: 0})  # as an older entry would be, now due
        celery.sent.clear()
        await reap_once(store)
        assert celery.sent == []
        assert [(await store.get(i)).status for i in (running, queued)] == ["cancelled", "cancelled"]
    finally:
        await store.aclose()
