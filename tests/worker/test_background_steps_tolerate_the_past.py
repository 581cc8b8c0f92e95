"""Background steps beside records an older release left, or that vanished (issue 25): each entry of a reaper or
webhook batch is looked at on its own, so an entry of a shape this code does not expect fails alone (logged,
its entry kept for a later look) and the rest of the batch is done. On a real redis-server; the old-shape
entries are planted first in their batch (lowest scores), ahead of the good ones."""

from __future__ import annotations

import json
import time

import pytest

from runtime.redis_store import keys
from worker.fleet.reaper import RETRY_FAILED_S, reap_once
from worker.records.record import PendingCall
from worker.records.retention import RetentionPolicy
from worker.records.store import InvocationStore

from .test_lifecycle import RecordingCelery
from .test_retention import _run


@pytest.fixture
async def broker():
    return RecordingCelery()


@pytest.fixture
async def store(redis_url, broker):
    store = InvocationStore(redis_url, celery_app=broker, retention=RetentionPolicy(settled_s=3600))
    yield store
    await store.aclose()


async def _invocation(store, session: str) -> str:
    await store.create_session("app", "ann", session)
    return await store.enqueue("app", "ann", session, "hi", None, None)


async def _plant_old_shapes(store) -> None:
    """e-old-index: an index entry of a shape this code does not read (no session); e-old-record: a record whose
    pending call is not JSON; e-gone: an entry whose invocation vanished (no index entry, no record)."""
    redis = store.redis
    await redis.hset(keys.invocation_index(), "e-old-index", json.dumps(["app", "ann"]))
    await redis.hset(keys.invocation_index(), "e-old-record", json.dumps(["app", "ann", "s-old"]))
    await redis.hset(keys.invocation("app", "ann", "e-old-record"),
                     mapping={"app_name": "app", "user_id": "ann", "status": "parked", "p:c9": "{not json"})


async def test_a_reaper_pass_does_the_rest_of_its_batch_when_an_old_shape_or_vanished_entry_fails(store, broker):
    redis = store.redis
    dead = await _invocation(store, "dead")  # its worker's lease ran out
    lost = await _invocation(store, "lost")  # its run job never arrived
    waiting = await _invocation(store, "waiting")  # parked on a call past its deadline
    await _run(store, waiting, "parked", [PendingCall(id="c1", name="approve")])
    await redis.hset(keys.invocation("app", "ann", dead), "status", "running")
    await _plant_old_shapes(store)
    past_ms = int(time.time() * 1000) - 60_000
    await redis.delete(keys.dispatch_due(), keys.lease_expiries(), keys.call_deadlines())
    await redis.zadd(keys.lease_expiries(), {"e-old-index": past_ms - 2, "e-gone": past_ms - 1, dead: past_ms})
    await redis.zadd(keys.dispatch_due(), {"e-old-index": past_ms - 1, lost: past_ms})
    await redis.zadd(keys.call_deadlines(), {"e-old-record c9": past_ms / 1000 - 1, f"{waiting} c1": past_ms / 1000})
    broker.sent.clear()

    before = time.time()
    assert await reap_once(store) == 7

    assert sorted(broker.sent) == sorted([dead, lost, waiting])  # the expired call's answer sends it too
    record = await store.get(waiting)
    assert record.status == "queued" and record.pending_calls == []
    # the old-shape entries are kept for a later look, the vanished one is dropped
    again = before + RETRY_FAILED_S
    assert await redis.zscore(keys.lease_expiries(), "e-old-index") >= int(again * 1000)
    assert await redis.zscore(keys.dispatch_due(), "e-old-index") >= int(again * 1000)
    assert await redis.zscore(keys.call_deadlines(), "e-old-record c9") >= int(again)
    assert await redis.zscore(keys.lease_expiries(), "e-gone") is None
    assert await redis.zcard(keys.lease_expiries()) == 1
    assert await redis.zcard(keys.call_deadlines()) == 1
    broker.sent.clear()
    assert await reap_once(store) == 0  # not looked at again before then
    assert broker.sent == []


async def test_a_webhook_pass_delivers_the_rest_of_its_batch_beside_an_unreadable_and_an_old_shape_entry(redis_url):
    from api.routes.webhooks import DeadLetterOut
    from worker.webhooks import outbox
    from worker.webhooks.deliverer import WebhookDeliverer

    from .test_webhooks import Receiver, _cancelled_with_webhook, _fast

    hook = Receiver().start()
    store = InvocationStore(redis_url)
    deliverer = WebhookDeliverer(store, _fast())
    try:
        good = await _cancelled_with_webhook(store, hook.url)
        redis = store.redis
        # an entry that is not JSON at all, and one of an older shape (no session, calls or url), both due first
        old = {"id": "e-old-1", "event": "completed", "inv": "e-old", "app": "weather", "user": "ann",
               "status": "completed", "error": "", "reason": "", "at": "1.5", "attempts": 0}
        await redis.hset(keys.webhook_outbox(), mapping={"e-junk-1": "{not json", "e-old-1": json.dumps(old)})
        await redis.zadd(keys.webhook_due(), {"e-junk-1": 1, "e-old-1": 2})

        assert await deliverer.deliver_due() == 2  # the good one and the old one: each on its own

        assert [json.loads(body)["data"]["invocationId"] for _, body in hook.requests] == [good]
        [dead], _ = await outbox.dead_letters(redis, limit=10)
        assert dead["id"] == "e-old-1" and "KeyError" in dead["last_error"], dead
        assert DeadLetterOut.from_entry(dead).invocation_id == "e-old"  # still shown by GET /webhooks/dead-letters
        # the unreadable one is left in the outbox (held like any claimed entry), for a person to see in the log
        assert await redis.hget(keys.webhook_outbox(), "e-junk-1") == "{not json"
        assert await redis.zscore(keys.webhook_due(), "e-junk-1") > time.time() * 1000
        assert (await outbox.stats(redis))["pending"] == 1
    finally:
        await deliverer.aclose()
        await store.aclose()
        hook.stop()


async def test_a_scheduler_pass_fires_the_other_due_schedules_when_one_of_an_old_shape_fails(redis_url):
    from worker.client import AgentqClient
    from worker.schedules import Scheduler
    from worker.schedules.clock import RETRY_FAILED_S
    from worker.schedules.firing import due_member

    client = AgentqClient(redis_url)
    try:
        good = await client.schedules.create("weather", "ann", {"intervalS": 60, "newMessage": "hi"})
        redis = client._store.redis
        old = due_member("weather", "ann", "old")  # a schedule whose spec this release does not read
        await redis.hset(keys.schedule("weather", "ann", "old"), mapping={"spec": "{\"everyFortnight\": true}",
                                                                          "rev": "1", "next_tick": "1000"})
        await redis.zadd(keys.schedules_due(), {"[not json": 1, old: 2, due_member("weather", "ann", good.id): 3})
        scheduler = Scheduler(client._store)
        before_ms = int(time.time() * 1000)

        await scheduler.fire_due()

        assert scheduler.fired == 1  # the good one, behind the two that failed
        assert len(await redis.zrange(keys.schedule_runs("weather", "ann", good.id), 0, -1)) == 1
        for member in ("[not json", old):  # kept, looked at again later instead of blocking the head of the set
            assert await redis.zscore(keys.schedules_due(), member) >= before_ms + RETRY_FAILED_S * 1000
    finally:
        await client.aclose()
