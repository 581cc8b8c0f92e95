"""On a real three-master Redis Cluster the webhook deliverer visits only the shards with a delivery due
(worker.webhooks.due): an idle pass reads the due index's few copies and no shard, however many shards are in
use; a marked delivery is still sent, an unmarked one after the next re-seed. End to end (real ``agentq worker``
processes that never re-seed, so only the writers' marks bring a shard to a pass), the notifications of a
park, an expired call and a completion arrive, and a call deadline shorter than the lease TTL is answered
within about a reaper pass of it, as on one Redis."""

from __future__ import annotations

import asyncio
import json
import time

import pytest

from runtime.redis_store import keys
from runtime.redis_store.scripts import DUE_CLAIM, DUE_SETTLE, WEBHOOK_CLAIM, WEBHOOK_DELIVERED
from tests.redis_cluster import LocalRedisCluster
from tests.worker.test_cluster_reaper import _by_name, _shards_in_use
from tests.worker.test_webhooks import KEY, HookedWorkers, Receiver, _fast
from tests.worker.test_worker_e2e import _settled
from worker.config.shards import shard_of
from worker.records.store import InvocationStore
from worker.webhooks import due, outbox
from worker.webhooks.deliverer import WebhookDeliverer
from worker.webhooks.signing import verify


@pytest.fixture
def store(cluster_store):
    return cluster_store


@pytest.fixture
def hook():
    made = Receiver([]).start()
    yield made
    made.stop()


def _marks_only(store: InvocationStore) -> WebhookDeliverer:
    """The worker's deliverer with its periodic re-seed turned off: only the writers' marks lead it to a shard."""
    deliverer = WebhookDeliverer(store, _fast())
    deliverer._reseeder._next = float("inf")
    return deliverer


async def _shards_with_later_deliveries(store: InvocationStore, count: int) -> list[str]:
    """``count`` shards in use, each with a delivery due an hour from now (none due), re-seeded into the index."""
    return await _shards_in_use(store, count, due_key=keys.webhook_due, entry="e-later-{shard}-1", reseed=due.reseed)


async def _idle_pass(redis_cluster, store: InvocationStore, count: int) -> dict:
    redis_cluster.flush()
    await _shards_with_later_deliveries(store, count)
    deliverer = _marks_only(store)
    assert await deliverer.deliver_due() == 0  # warms the client and the script cache
    before = _by_name(redis_cluster)
    assert await deliverer.deliver_due() == 0
    spent = _by_name(redis_cluster)
    spent.subtract(before)
    await deliverer.aclose()
    print(f"\nan idle deliverer pass with {count} shards in use: {dict(+spent)}")
    return dict(+spent)


@pytest.mark.timeout(120)
async def test_an_idle_deliverer_pass_on_a_cluster_reads_only_the_due_index_with_10_or_1000_shards_in_use(
        redis_cluster, redis_cluster_url, store):
    few = await _idle_pass(redis_cluster, store, 10)
    many = await _idle_pass(redis_cluster, store, 1000)
    # one claim script per copy of the index, one range read inside each: no shard's schedule is read
    assert few == many == {"cmdstat_evalsha": due.COPIES, "cmdstat_zrangebyscore": due.COPIES}
    before = sum(_by_name(redis_cluster).values())
    assert await outbox.claim(store.redis, limit=50, hold_s=20) == []  # what every pass cost before: every shard
    walk = sum(_by_name(redis_cluster).values()) - before
    print(f"a claim walking the 1000 shards in use: {walk} commands")
    assert walk >= 1000


async def test_on_a_cluster_a_cancelled_invocations_notification_is_sent_by_a_pass_that_visits_its_shard_alone(
        redis_cluster, redis_cluster_url, store, hook, user):
    await _shards_with_later_deliveries(store, 200)
    session = await store.create_session("weather", user)
    invocation_id = await store.enqueue("weather", user, session.id, "hi", None, None, webhook=hook.url)
    await store.cancel(invocation_id, "changed my mind")  # queues the notification and marks its shard
    shard = shard_of("weather", user, cluster=True)
    index = keys.webhook_due_shards(due.copy_of(shard))
    assert await store.redis.zscore(index, shard) is not None
    deliverer = _marks_only(store)
    for script in (DUE_CLAIM, DUE_SETTLE, WEBHOOK_CLAIM, WEBHOOK_DELIVERED):  # no NOSCRIPT round trip counted
        await store.redis.script_load(script.source)
    before = _by_name(redis_cluster)
    assert await deliverer.deliver_due() == 1
    spent = _by_name(redis_cluster)
    spent.subtract(before)
    await deliverer.aclose()
    # the index's copies, then the one shard: its claim, the delivery's outcome and its score afterwards
    assert spent["cmdstat_evalsha"] == due.COPIES + 3, dict(+spent)
    [(headers, body)] = hook.requests
    assert verify(KEY, headers, body) and json.loads(body)["data"]["invocationId"] == invocation_id
    assert await store.redis.zscore(index, shard) is None  # nothing left there: off the index until marked again


async def test_on_a_cluster_a_dead_letter_redelivered_is_sent_again_by_the_next_pass(redis_cluster_url, store, user):
    down = Receiver([])  # nothing listens: every attempt is refused until the retry window closes
    session = await store.create_session("weather", user)
    invocation_id = await store.enqueue("weather", user, session.id, "hi", None, None, webhook=down.url)
    await store.cancel(invocation_id, "changed my mind")
    deliverer = WebhookDeliverer(store, _fast(retry_for_s=0.2))
    deliverer._reseeder._next = float("inf")
    deadline = time.monotonic() + 20
    while (await outbox.stats(store.redis))["dead_letters"] == 0:  # each retry is found again by its mark
        assert time.monotonic() < deadline, "never dead-lettered"
        await deliverer.deliver_due()
        await asyncio.sleep(0.02)
    down.start()
    try:
        [letter], _ = await outbox.dead_letters(store.redis, limit=10)
        assert await outbox.redeliver(store.redis, letter)
        assert await deliverer.deliver_due() == 1
        assert [json.loads(body)["data"]["invocationId"] for _, body in down.requests] == [invocation_id]
    finally:
        down.stop()
        await deliverer.aclose()


async def test_on_a_cluster_a_delivery_no_writer_marked_is_sent_after_the_next_reseed(
        redis_cluster_url, store, hook, user):
    session = await store.create_session("weather", user)
    invocation_id = await store.enqueue("weather", user, session.id, "hi", None, None, webhook=hook.url)
    await store.cancel(invocation_id, "changed my mind")
    shard = shard_of("weather", user, cluster=True)
    await store.redis.delete(*[keys.webhook_due_shards(f"w:{n}") for n in range(due.COPIES)])  # the mark lost
    deliverer = _marks_only(store)
    assert await deliverer.deliver_due() == 0  # unmarked: no pass visits its shard
    assert await due.reseed(store) == 1
    assert await deliverer.deliver_due() == 1
    await deliverer.aclose()
    assert await store.redis.zcard(keys.webhook_due(shard)) == 0
    assert len(hook.requests) == 1


# --- end to end: real workers on a Cluster that never re-seed the index ----------------------------------------


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    with LocalRedisCluster(tmp_path_factory.mktemp("webhook-due-cluster")) as cluster:
        yield cluster


@pytest.fixture(scope="module")
def hooked_cluster(cluster, broker, tmp_path_factory):
    """Two webhook-delivering workers on the Cluster; the re-seed's turn is held by the test for good, so a
    delivery reaches a pass only through its writer's mark."""
    pool = HookedWorkers(cluster.url, tmp_path_factory.mktemp("webhook-due-logs"), broker_url=broker.url)
    with pool.admin() as admin:
        admin.set(keys.webhook_due_shards_reseed(), "test", px=3_600_000)
    pool.ensure("w1", "w2")
    yield pool
    pool.stop_all()


@pytest.mark.timeout(120)
async def test_on_a_cluster_a_short_call_deadline_is_answered_within_a_pass_and_every_notification_arrives(
        hooked_cluster, broker, hook, monkeypatch, user):
    from worker.client import AgentqClient

    monkeypatch.setenv("AGENTQ_REDIS_URL", hooked_cluster.redis_url)  # the test apps' side-effect counters
    monkeypatch.setenv("AGENTQ_BROKER_URL", broker.url)
    client = AgentqClient(hooked_cluster.redis_url)
    try:
        session = await client.create_session("approval", user)
        # far shorter than the lease TTL (5 s), whose entry is what brought the shard to a pass before
        invocation_id = await client.enqueue("approval", user, session.id, "Please pay 100", park_timeout=0.2,
                                             webhook=hook.url)
        parked = await _settled(client, invocation_id, "parked")
        deadline = parked.pending_calls[0].deadline
        async with asyncio.timeout(30):
            while (await client.get(invocation_id)).status == "parked":
                await asyncio.sleep(0.05)
        late = time.time() - deadline
        print(f"\nthe call deadline was answered {late:.2f}s after it passed (reaper period 1 s)")
        assert late < 3.0  # generous against the 1 s pass; unmarked, the shard waited for its lease's entry
        await _settled(client, invocation_id, "completed")
        async with asyncio.timeout(30):
            while len(hook.requests) < 3:
                await asyncio.sleep(0.05)
        kinds = sorted(json.loads(body)["type"] for _, body in hook.requests)
        assert kinds == ["invocation.completed", "invocation.expired", "invocation.parked"]
        assert all(verify(KEY, headers, body) for headers, body in hook.requests)
    finally:
        await client.aclose()


@pytest.mark.timeout(120)
async def test_on_a_cluster_a_completed_invocations_notification_reaches_a_pass_by_its_settles_mark(
        hooked_cluster, broker, hook, monkeypatch, user):
    from worker.client import AgentqClient

    monkeypatch.setenv("AGENTQ_REDIS_URL", hooked_cluster.redis_url)
    monkeypatch.setenv("AGENTQ_BROKER_URL", broker.url)
    client = AgentqClient(hooked_cluster.redis_url)
    try:
        session = await client.create_session("weather", user)
        invocation_id = await client.enqueue("weather", user, session.id, "hi", webhook=hook.url)
        await _settled(client, invocation_id, "completed")
        async with asyncio.timeout(20):  # well inside the 30 s re-seed period (and no worker re-seeds here)
            while not hook.requests:
                await asyncio.sleep(0.05)
        [(headers, body)] = hook.requests
        assert verify(KEY, headers, body)
        assert (json.loads(body)["type"], json.loads(body)["data"]["invocationId"]) == (
            "invocation.completed", invocation_id)
    finally:
        await client.aclose()
