"""The reaper on a real three-master Redis Cluster reads only the shards that are due (worker.config.due_shards): a pass
costs the same number of commands with 1,000 shards in use as with 10, the writers' marks and the periodic
re-seed bring a shard to a pass in time, and a claimed shard's score follows its earliest entry."""

from __future__ import annotations

import asyncio
import time
from collections import Counter

import pytest
import redis

from runtime.redis_store import keys
from runtime.redis_store.scripts import DUE_CLAIM, DUE_DROP, DUE_SETTLE
from worker.config import due_shards
from worker.config.shards import slot_tag
from worker.fleet import reaper
from worker.fleet.reaper import reap_once
from worker.fleet.sweeper import sweep_once
from worker.records.retention import RetentionPolicy
from worker.records.store import InvocationStore, Where

_NOT_COUNTED = {"info", "cluster", "command", "script", "ping", "readonly", "config", "client", "hello"}
"""The test's own reads and a cluster client's housekeeping, not the pass's work."""


@pytest.fixture
def store(cluster_store):
    return cluster_store


def _commands(cluster) -> int:
    """Commands every master served so far (Lua scripts' inner calls included), housekeeping left out."""
    return sum(_by_name(cluster).values())


def _by_name(cluster) -> Counter:
    counts: Counter = Counter()
    for node in cluster.nodes:
        with redis.Redis(port=node.port, decode_responses=True) as client:
            for name, stats in client.info("commandstats").items():
                if name.removeprefix("cmdstat_").split("|")[0] not in _NOT_COUNTED:
                    counts[name] += stats["calls"]
    return counts


async def _shards_in_use(store: InvocationStore, count: int, *, due_key=keys.retention_due, entry: str = "e-later-{shard}",
                         reseed=due_shards.reseed) -> list[str]:
    """``count`` registered shards, each holding one entry an hour away in its ``due_key`` sorted set (nothing
    due; a retention entry by default), re-seeded into the index ``reseed`` fills."""
    shards = [slot_tag(slot) for slot in range(0, 16384, 16384 // count)][:count]
    later_ms = int((time.time() + 3600) * 1000)
    for start in range(0, count, 250):
        chunk = shards[start : start + 250]
        replies = await store.batch(("SADD", keys.shards(), *chunk),
                                    *[("ZADD", due_key(shard), later_ms, entry.format(shard=shard))
                                      for shard in chunk])
        assert not [reply for reply in replies if isinstance(reply, Exception)]
    assert await reseed(store) == count
    return shards


async def _lost_run_job(store: InvocationStore, shard: str) -> str:
    """A dispatch-watchdog entry a second overdue, marked as the enqueue marks it (its record is gone)."""
    due_ms = int(time.time() * 1000) - 1000
    await store.batch(("ZADD", keys.dispatch_due(shard), due_ms, "e-lost"), due_shards.mark(shard, due_ms))
    return "e-lost"


async def _pass_commands(redis_cluster, store: InvocationStore, count: int) -> int:
    redis_cluster.flush()
    shards = await _shards_in_use(store, count)
    assert await reap_once(store) == 0  # warms the client and the script cache; nothing is due
    invocation_id = await _lost_run_job(store, shards[count // 2])
    for script in (DUE_CLAIM, DUE_SETTLE, DUE_DROP):  # on every master, so no pass pays a NOSCRIPT round trip
        await store.redis.script_load(script.source)
    before = _by_name(redis_cluster)
    acted = await reap_once(store)
    spent = _by_name(redis_cluster)
    spent.subtract(before)
    print(f"\n{count} shards in use, one pass: {dict(+spent)}")
    spent = sum(spent.values())
    assert acted == 1
    assert await store.redis.zscore(keys.dispatch_due(shards[count // 2]), invocation_id) is None
    return spent


@pytest.mark.timeout(120)
async def test_a_reaper_pass_with_one_shard_due_costs_as_many_commands_with_1000_shards_in_use_as_with_10(
        redis_cluster, redis_cluster_url, store):
    few = await _pass_commands(redis_cluster, store, 10)
    many = await _pass_commands(redis_cluster, store, 1000)
    before = _commands(redis_cluster)
    await sweep_once(store)  # what every pass cost before: a walk over every shard in use (retention sets only)
    walk = _commands(redis_cluster) - before
    before = _commands(redis_cluster)
    await due_shards.reseed(store)
    reseed = _commands(redis_cluster) - before
    print(f"\nreaper pass, 1 shard due: {few} commands with 10 shards in use, {many} with 1000; "
          f"a walk of the 1000 retention sets alone: {walk}; a re-seed of 1000 (once per "
          f"{due_shards.RESEED_S:g}s, one worker): {reseed}")
    assert many == few
    assert walk >= 1000


async def test_an_entry_no_writer_marked_is_reaped_after_the_next_reseed(redis_cluster_url, store, monkeypatch):
    # this process's periodic re-seed would find the shard on its own when its last one was over RESEED_S ago
    # (its turn depends on which tests ran before in this process): the test re-seeds by hand instead
    monkeypatch.setattr(reaper._reseeder, "_next", float("inf"))
    shard = slot_tag(4242)
    await store.redis.sadd(keys.shards(), shard)
    await store.redis.zadd(keys.call_deadlines(shard), {"e-gone c1": time.time() - 1})  # a deadline that passed
    assert await reap_once(store) == 0  # unmarked: no pass reads its shard
    assert await due_shards.reseed(store) == 1
    assert await reap_once(store) == 1  # its record is gone: nothing to answer, the entry is dropped
    assert await store.redis.zcard(keys.call_deadlines(shard)) == 0
    assert await store.redis.zscore(keys.due_shards(due_shards.copy_of(shard)), shard) is None  # nothing left


async def test_a_claimed_shard_is_scored_by_its_earliest_entry_and_keeps_a_lower_mark_written_meanwhile(
        redis_cluster_url, store):
    shard = slot_tag(77)
    index = keys.due_shards(due_shards.copy_of(shard))
    now_ms = int(time.time() * 1000)
    await store.batch(("ZADD", keys.retention_due(shard), now_ms + 600_000, "e-a"), due_shards.mark(shard, now_ms))

    claimed, claimed_ms = await due_shards.claim(store, now_ms)
    assert (claimed, await store.redis.zscore(index, shard)) == ([shard], claimed_ms)
    assert (await due_shards.claim(store, now_ms)) == ([], claimed_ms)  # another worker's pass skips it
    await due_shards.settle(store, shard, claimed_ms)
    assert await store.redis.zscore(index, shard) == now_ms + 600_000

    await store.batch(due_shards.mark(shard, now_ms))
    claimed, claimed_ms = await due_shards.claim(store, now_ms)
    await store.batch(("ZADD", keys.dispatch_due(shard), now_ms + 5000, "e-b"), due_shards.mark(shard, now_ms + 5000))
    await due_shards.settle(store, shard, claimed_ms)  # the writer's mark came after the claim: it stays
    assert await store.redis.zscore(index, shard) == now_ms + 5000


async def test_an_enqueue_on_a_cluster_marks_its_shard_due_by_its_dispatch_watchdog_entry(redis_cluster_url, store):
    session = await store.create_session("weather", "ann")
    invocation_id = await store.enqueue("weather", "ann", session.id, {"role": "user", "parts": [{"text": "hi"}]},
                                 None, None)
    shard = store.shard(await store.locate(invocation_id))
    watchdog = await store.redis.zscore(keys.dispatch_due(shard), invocation_id)
    assert watchdog is not None
    assert await store.redis.zscore(keys.due_shards(due_shards.copy_of(shard)), shard) == watchdog


def test_a_shard_is_scored_in_the_same_copy_every_time_and_the_copies_are_a_fixed_few():
    copies = {due_shards.copy_of(slot_tag(slot)) for slot in range(0, 16384, 7)}
    assert copies == {f"d:{n}" for n in range(due_shards.COPIES)}
    assert due_shards.copy_of("s:1") == due_shards.copy_of("s:1")
    assert keys.due_shards("d:3") == "agentq:{d:3}:due_shards"


@pytest.mark.timeout(60)
async def test_on_a_cluster_an_idle_session_expires_from_its_users_shard_and_leaves_the_apps_user_set(
        redis_cluster_url, broker, monkeypatch):
    monkeypatch.setenv("AGENTQ_BROKER_URL", broker.url)
    store = InvocationStore(redis_cluster_url, retention=RetentionPolicy(session_idle_s=0.5))
    try:
        session = await store.create_session("weather", "ida")
        shard = store.shard(Where(app="weather", user="ida", session=session.id))
        expiries = keys.session_expiries(shard)
        assert await store.redis.zcard(expiries) == 1
        assert await store.redis.exists(keys.session_expiries()) == 0  # not the one-node key
        assert await store.redis.sismember(keys.app_users("weather", shard), "ida")
        deadline = time.monotonic() + 30
        while await store.redis.exists(keys.session_meta("weather", "ida", session.id)):
            assert time.monotonic() < deadline, "the idle session was never deleted"
            await reap_once(store)
            await asyncio.sleep(0.2)
        listed = await store.session_service.list_sessions(app_name="weather")
        assert (listed.sessions, await store.redis.zcard(expiries)) == ([], 0)
        assert not await store.redis.sismember(keys.app_users("weather", shard), "ida")
    finally:
        await store.aclose()


async def test_enqueues_to_one_shard_list_it_once_per_process_and_a_list_lost_since_comes_back_from_another(
        redis_cluster, redis_cluster_url, store):
    session = await store.create_session("weather", "reg")
    shard = store.shard(Where(app="weather", user="reg", session=session.id))
    message = {"role": "user", "parts": [{"text": "hi"}]}
    await store.enqueue("weather", "reg", session.id, message, None, None)
    before = _by_name(redis_cluster)["cmdstat_sadd"]
    for _ in range(3):
        await store.enqueue("weather", "reg", session.id, message, None, None)
    assert _by_name(redis_cluster)["cmdstat_sadd"] == before  # listed already by this process
    await store.redis.delete(keys.shards())  # lost, as with a master that died before its replica had it
    other = InvocationStore(redis_cluster_url)
    try:
        await other.enqueue("weather", "reg", session.id, message, None, None)
    finally:
        await other.aclose()
    assert await store.redis.smembers(keys.shards()) == {shard}
