"""Exact counts by status (worker.records.status_counts): after 100,000 invocations the counters the status scripts keep
equal the statuses of the records that exist, for the deployment, each app and each user, and they go back
down as retention removes records.

The 100,000 are driven through the store and lease calls a worker makes (every status script: enqueue, claim,
add_pending, park, answer, cancel, settle, session deletion, the sweeper's FORGET), concurrently from this
process against a real redis-server, because real workers on this 2-core machine would take minutes for them;
``test_counts_follow_invocations_run_by_real_workers`` runs invocations on real ``agentq worker`` processes.
"""

from __future__ import annotations

import asyncio
import random
import re
import time
from collections import Counter
from pathlib import Path

import pytest

from runtime.redis_store import keys, lua
from runtime.statuses import FINAL, STATUSES
from worker.fleet import lease
from worker.fleet.sweeper import sweep_once
from worker.records.record import PendingCall
from worker.records.retention import RetentionPolicy
from worker.records.status_counts import MOVES, count_by_status, count_underflows, every_scope_below_zero
from worker.records.store import InvocationStore

from .test_lifecycle import RecordingCelery

APPS = ("shop", "claims/eu")
USERS = tuple(f"user-{n}" for n in range(98)) + ("ann/é e", "bob{x}:y")  # odd names are escaped in the fields
LANES = 500
"""Sessions run side by side; each runs its invocations one after the other (one at a time per session)."""
PER_LANE = 200
LEASE_S = 3600.0
"""Nothing heartbeats here: a lease long enough that a loaded machine's pauses never expire one."""
OUTCOMES = ("completed", "completed", "completed", "failed", "parked", "answered", "cancel_running",
            "cancel_parked", "cancel_queued")


async def _one(store: InvocationStore, app: str, user: str, session: str, outcome: str) -> None:
    """One invocation of a lane, from enqueue to ``outcome`` (it leaves the session's queue empty)."""
    invocation_id = await store.enqueue(app, user, session, "hi", None, None)
    if outcome == "cancel_queued":
        await store.cancel(invocation_id, "changed my mind")
        return
    claim = await lease.acquire(store, invocation_id, "w", ttl_s=LEASE_S)
    if outcome in ("completed", "failed"):
        assert (await lease.settle(store, claim, outcome))[0] == "ok"
        return
    if outcome == "cancel_running":
        await store.cancel(invocation_id, "stop")
        return
    assert await lease.add_pending(store, claim, [PendingCall(id="c1", name="approve")])
    assert (await lease.settle(store, claim, "parked"))[0] == "ok"
    if outcome == "cancel_parked":
        await store.cancel(invocation_id, "nobody answered")
    elif outcome == "answered":
        await store.respond(invocation_id, [{"id": "c1", "name": "approve", "response": {"ok": True}}])
        claim = await lease.acquire(store, invocation_id, "w", ttl_s=LEASE_S)
        assert await lease.consume_responses(store, claim, claim.response_fields)
        assert (await lease.settle(store, claim, "completed"))[0] == "ok"


async def _lane(store: InvocationStore, lane: int) -> None:
    rng = random.Random(lane)
    app, user = APPS[lane % len(APPS)], USERS[lane % len(USERS)]
    session = f"lane-{lane}"
    await store.create_session(app, user, session)
    for _ in range(PER_LANE - 2):
        await _one(store, app, user, session, rng.choice(OUTCOMES))
    # the lane ends with one running invocation and one queued behind it (or, every 7th lane, deleted with both)
    running = await store.enqueue(app, user, session, "hi", None, None)
    assert not isinstance(await lease.acquire(store, running, "w", ttl_s=LEASE_S), str)
    await store.enqueue(app, user, session, "hi", None, None)
    if lane % 7 == 0:
        await store.delete_session(app, user, session)


async def _truth(store: InvocationStore) -> tuple[Counter, int]:
    """(scope, status) -> how many records have that status, read from the records themselves (every record
    listed by a full SCAN of the keyspace), and how many records there are."""
    records = [key async for key in store.redis.scan_iter(match="agentq:{*}:i:*", count=5000)
               if not key.endswith((":journal", ":settled"))]
    truth: Counter = Counter()
    for start in range(0, len(records), 5000):
        pipe = store.redis.pipeline(transaction=False)
        for key in records[start : start + 5000]:
            pipe.hmget(key, "app_name", "user_id", "status")
        for app, user, status in await pipe.execute():
            truth.update([("all", status), (app, status), ((app, user), status)])
    return truth, len(records)


async def _assert_counts_are_the_records(store: InvocationStore) -> dict[str, int]:
    truth, records = await _truth(store)
    counted = await count_by_status(store.redis, cluster=False)
    assert counted == {status: truth["all", status] for status in STATUSES}
    assert sum(counted.values()) == records
    for app in APPS:
        assert await count_by_status(store.redis, cluster=False, apps=[app]) == {
            status: truth[app, status] for status in STATUSES}
        for user in USERS:
            assert await count_by_status(store.redis, cluster=False, apps=[app], users=[user]) == {
                status: truth[(app, user), status] for status in STATUSES}, (app, user)
    return counted


@pytest.mark.timeout(3600)  # about 2 minutes of CPU; far longer on a machine shared by many
async def test_counts_stay_exact_over_100000_invocations_and_fall_as_retention_removes_them(redis_url):
    store = InvocationStore(redis_url, celery_app=RecordingCelery(), retention=RetentionPolicy(settled_s=2.0))
    try:
        started = time.perf_counter()
        await asyncio.gather(*(_lane(store, lane) for lane in range(LANES)))
        elapsed = time.perf_counter() - started
        print(f"\n{LANES * PER_LANE} invocations through the status scripts in {elapsed:.1f}s")
        counted = await _assert_counts_are_the_records(store)
        assert sum(counted.values()) == LANES * PER_LANE
        assert all(counted[status] > 0 for status in STATUSES), counted  # every transition was exercised
        print("counts after the run:", counted)

        await asyncio.sleep(2.0)  # every final record is past its retention now
        started = time.perf_counter()
        deadline = time.monotonic() + 600
        while True:
            finals = {status: n for status, n in (await count_by_status(store.redis, cluster=False)).items()
                      if status in FINAL and n}
            if not finals:
                break
            assert time.monotonic() < deadline, "the sweeper did not remove the final records"
            await sweep_once(store)
        print(f"swept in {time.perf_counter() - started:.1f}s")
        left = await _assert_counts_are_the_records(store)
        assert left == {**counted, "completed": 0, "failed": 0, "cancelled": 0}
    finally:
        await store.aclose()


async def test_each_transition_adds_one_to_one_flow_per_scope_and_a_users_flows_leave_with_its_last_record(
        redis_url):
    store = InvocationStore(redis_url, celery_app=RecordingCelery(), retention=RetentionPolicy(settled_s=0.1))
    user = "u:shop/ann%2F%C3%A9%20e:"
    try:
        await store.create_session("shop", "ann/é e", "s")
        invocation_id = await store.enqueue("shop", "ann/é e", "s", "hi", None, None)
        assert await store.redis.hgetall(keys.status_counts()) == {
            "!apps": " shop ", "a:shop:>queued": "1", f"{user}>queued": "1"}
        claim = await lease.acquire(store, invocation_id, "w", ttl_s=LEASE_S)
        assert (await lease.settle(store, claim, "completed"))[0] == "ok"
        app_flows = {"a:shop:>queued": "1", "a:shop:queued>running": "1", "a:shop:running>completed": "1"}
        assert await store.redis.hgetall(keys.status_counts()) == {
            "!apps": " shop ", **app_flows,
            f"{user}>queued": "1", f"{user}queued>running": "1", f"{user}running>completed": "1"}
        assert await count_by_status(store.redis, cluster=False) == {**dict.fromkeys(STATUSES, 0), "completed": 1}
        await store.redis.zadd(keys.retention_due(), {invocation_id: 0})
        await asyncio.sleep(0.2)
        assert await sweep_once(store) == 1
        # the app's flows stay (apps are few; the deployment's counts add them up), the user's are gone
        assert await store.redis.hgetall(keys.status_counts()) == {
            "!apps": " shop ", **app_flows, "a:shop:completed>": "1"}
        assert await count_by_status(store.redis, cluster=False) == dict.fromkeys(STATUSES, 0)
        assert await store.redis.hget(keys.invocation_index(), invocation_id) is None
    finally:
        await store.aclose()


def test_the_reader_reads_the_flows_of_every_move_the_lua_library_counts_in_one_flow():

    library = (Path(lua.__file__).parent / "lib" / "status_counts.lua").read_text()
    block = library[library.index("local COUNT_MOVES = {") : library.index("local COUNT_MOVE = {}")]
    assert tuple(re.findall(r"\{'([a-z]+)', '([a-z]+)'\}", block)) == MOVES


async def test_a_move_outside_the_listed_ones_is_counted_as_a_removal_and_a_creation(redis_url):
    store = InvocationStore(redis_url, celery_app=RecordingCelery())
    try:
        await store.create_session("shop", "ann", "s")
        invocation_id = await store.enqueue("shop", "ann", "s", "hi", None, None)
        claim = await lease.acquire(store, invocation_id, "w", ttl_s=LEASE_S)
        assert (await lease.settle(store, claim, "completed"))[0] == "ok"
        # what a script moving a completed invocation back to queued would count (no script does today)
        script = "local who = {'shop', 'ann', '1'}\ncount_move_known(KEYS[1], KEYS[2], who, 'completed', 'queued')"
        library = (Path(lua.__file__).parent / "lib" / "status_counts.lua").read_text()
        await store.redis.eval(library + "\n" + script, 2, keys.status_counts(), "agentq:unused")
        assert await count_by_status(store.redis, cluster=False) == {**dict.fromkeys(STATUSES, 0), "queued": 1}
        assert await store.redis.hmget(keys.status_counts(), ["a:shop:completed>", "a:shop:>queued"]) == ["1", "2"]
    finally:
        await store.aclose()


async def test_a_count_a_bug_took_below_zero_reads_as_zero_and_is_counted_as_an_underflow(redis_url):
    store = InvocationStore(redis_url, celery_app=RecordingCelery())
    try:
        await store.create_session("shop", "ann", "s")
        await store.enqueue("shop", "ann", "s", "hi", None, None)
        assert await count_underflows(store.redis, cluster=False) == 0
        # what a script moving an invocation out of a status it was never counted in would write
        await store.redis.hincrby(keys.status_counts(), "a:shop:parked>queued", 1)
        await store.redis.hincrby(keys.status_counts(), "u:shop/ann:parked>queued", 1)
        assert await count_by_status(store.redis, cluster=False) == {
            **dict.fromkeys(STATUSES, 0), "queued": 2}
        assert await count_underflows(store.redis, cluster=False) == 1  # the app's parked count
        assert every_scope_below_zero(await store.redis.hgetall(keys.status_counts())) == {
            "a:shop:parked": -1, "u:shop/ann:parked": -1}
        await store.redis.hincrby(keys.status_counts(), "a:shop:>parked", 1)  # undone, for the autouse check
        await store.redis.hincrby(keys.status_counts(), "u:shop/ann:>parked", 1)
    finally:
        await store.aclose()


@pytest.mark.timeout(300)
async def test_counts_follow_invocations_run_by_real_workers(workers, client, user):
    """Parks, answers, cancels, completions and a session deletion on ``agentq worker`` processes: the user's
    counts equal the statuses its records have (other tests share the server, so the user's scope is compared)."""
    weather = await client.create_session("weather", user)
    completed = [await client.enqueue("weather", user, weather.id, "Weather in Paris?") for _ in range(20)]
    approvals = []
    for _ in range(10):
        session = await client.create_session("approval", user)
        approvals.append((session.id, await client.enqueue("approval", user, session.id, "Please pay 100")))
    parked = {invocation_id: await client.wait(invocation_id, timeout=60) for _, invocation_id in approvals}
    assert {record.status for record in parked.values()} == {"parked"}
    ids = [invocation_id for _, invocation_id in approvals]
    for invocation_id in ids[:5]:
        [call] = parked[invocation_id].pending_calls
        await client.respond(invocation_id, [{"id": call.id, "response": {"approved": True}}])
    for invocation_id in ids[5:8]:
        await client.cancel(invocation_id, "no longer needed")
    await client.delete_session("approval", user, approvals[8][0])  # its parked invocation is cancelled
    for invocation_id in completed + ids[:5]:
        await client.wait(invocation_id, timeout=60)
    records = {invocation_id: (await client.get(invocation_id)).status for invocation_id in completed + ids}
    assert Counter(records.values()) == {"completed": 25, "cancelled": 4, "parked": 1}
    for app, mine in (("weather", completed), ("approval", ids)):
        assert await client.ops.status_counts([app], [user]) == {
            status: sum(records[i] == status for i in mine) for status in STATUSES}


@pytest.mark.timeout(300)
async def test_on_a_cluster_counts_add_up_over_the_shards_and_retention_sweeps_every_shard(
        redis_cluster_url, redis_url, monkeypatch):
    from redis.crc import key_slot

    from tests.worker.test_cluster_e2e import _users_on_every_master

    monkeypatch.setenv("AGENTQ_BROKER_URL", redis_url)  # a Cluster store sends run jobs through a plain broker
    store = InvocationStore(redis_cluster_url, celery_app=RecordingCelery(),
                            retention=RetentionPolicy(settled_s=0.5))
    users = _users_on_every_master("shop", "counted")
    try:
        made: dict[str, str] = {}
        for user in users:
            await store.create_session("shop", user, "s")
            for outcome in ("completed", "failed", "cancel_parked", "parked"):
                await _one(store, "shop", user, "s", outcome)
            made[user] = await store.enqueue("shop", user, "s", "hi", None, None)  # stays queued
        shards = {store.shard(await store.locate(made[user])) for user in users}
        index_slots = {key_slot(store.index_key(invocation_id).encode()) for invocation_id in made.values()}
        assert (len(shards), len(index_slots)) == (3, 3)  # one per master; index entries by the id's slot
        expected = {"queued": 1, "running": 0, "parked": 1, "completed": 1, "failed": 1, "cancelled": 1}
        for user in users:
            assert await count_by_status(store.redis, cluster=True, apps=["shop"], users=[user]) == expected
        assert await count_by_status(store.redis, cluster=True) == {s: 3 * n for s, n in expected.items()}

        await asyncio.sleep(0.6)
        deadline = time.monotonic() + 60
        while (await count_by_status(store.redis, cluster=True))["completed"] or (
                await count_by_status(store.redis, cluster=True))["cancelled"]:
            assert time.monotonic() < deadline, "the sweeper did not reach every shard"
            await sweep_once(store)
            await asyncio.sleep(0.05)
        assert await count_by_status(store.redis, cluster=True) == {
            **{s: 3 * n for s, n in expected.items()}, "completed": 0, "failed": 0, "cancelled": 0}
        for user in users:
            listed = await store.list_invocations("shop", user)
            assert sorted(record.status for record in listed) == ["parked", "queued"]
        left = [key async for key in store.redis.scan_iter(match="agentq:{shop/counted-*}:i:*")]
        assert len(left) == 6  # the parked and queued records (the others' keys went with them)
    finally:
        await store.aclose()
