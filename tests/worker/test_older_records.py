"""Records written by an older layout (issue 25): no counts, a TTL that expired them, no marker; the sweeper and
the status scripts take them as they come, one entry's trouble never costs the rest of its batch."""

from __future__ import annotations

import asyncio

import pytest

from runtime.redis_store import keys
from runtime.statuses import STATUSES
from worker.fleet.sweeper import sweep_once
from worker.records.retention import RetentionPolicy
from worker.records.status_counts import count_by_status, count_underflows, every_scope_below_zero
from worker.records.store import InvocationStore

from .test_lifecycle import RecordingCelery
from .test_retention import GONE, _run, _traces


@pytest.fixture
async def store(redis_url):
    store = InvocationStore(redis_url, celery_app=RecordingCelery(), retention=RetentionPolicy(settled_s=0.01))
    await store.create_session("app", "u", "s")
    yield store
    await store.aclose()


async def test_a_batch_with_an_expired_old_record_forgets_every_entry_of_it(store):
    expired = await store.enqueue("app", "u", "s", "old", None, None)
    await _run(store, expired, "completed")
    await store.redis.delete(keys.invocation("app", "u", expired))  # an older layout's TTL ran out
    later = await store.enqueue("app", "u", "s", "new", None, None)
    await _run(store, later, "completed")
    waiting = await store.enqueue("app", "u", "s", "waiting", None, None)
    for invocation_id in (expired, waiting, later):
        await store.redis.zadd(keys.retention_due(), {invocation_id: 0})
    await asyncio.sleep(0.05)  # past the 10 ms retention of the completed ones
    assert await sweep_once(store) == 3
    assert await _traces(store, expired) == GONE
    assert await _traces(store, later) == GONE
    # the queued one in the same batch keeps its entry, to be looked at again
    assert await store.redis.zscore(keys.retention_due(), waiting) is not None


async def test_an_invocation_counted_by_no_counter_is_counted_by_its_next_transition_and_none_goes_below_zero(
        store):
    invocation_id = await store.enqueue("app", "u", "s", "old", None, None)
    # as the previous release left it: no 'counted' marker and no counters
    await store.redis.hdel(keys.invocation("app", "u", invocation_id), "counted")
    await store.redis.delete(keys.status_counts())
    await _run(store, invocation_id, "completed")
    counts = await count_by_status(store.redis, cluster=False)
    assert {status: n for status, n in counts.items() if n} == {"completed": 1}
    assert await count_underflows(store.redis, cluster=False) == 0
    await store.redis.zadd(keys.retention_due(), {invocation_id: 0})
    await asyncio.sleep(0.05)
    await sweep_once(store)
    assert await _traces(store, invocation_id) == GONE
    assert await count_by_status(store.redis, cluster=False) == dict.fromkeys(STATUSES, 0)
    assert every_scope_below_zero(await store.redis.hgetall(keys.status_counts())) == {}
    assert sorted(await store.redis.hkeys(keys.status_counts())) == [  # counted from its first transition on
        "!apps", "a:app:>running", "a:app:completed>", "a:app:running>completed"]
