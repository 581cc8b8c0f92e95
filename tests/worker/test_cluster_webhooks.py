"""Webhooks from a store on a real three-master Redis Cluster: each notification stays in the shard of its
invocation's user (outbox, schedule, counters, dead letters), the worker's deliverer claims from every shard, and
the readers (counters, dead-letter pages, one dead letter, a redelivery) merge the shards. A real HTTP receiver;
the worker's own WebhookDeliverer in-process."""

from __future__ import annotations

import json

import pytest
from redis.asyncio.cluster import RedisCluster

from runtime.redis_store import keys
from tests.worker.test_cluster_e2e import _users_on_every_master
from tests.worker.test_webhooks import KEY, Receiver, _deliver_until_settled, _fast
from worker.config.shards import shard_of
from worker.records.store import InvocationStore
from worker.webhooks import outbox as outbox
from worker.webhooks.deliverer import WebhookDeliverer
from worker.webhooks.signing import verify


@pytest.fixture
def hook():
    """A real HTTP receiver, not listening until the test starts it."""
    made = Receiver([])
    yield made
    made.stop()


@pytest.fixture
def store(cluster_store):
    return cluster_store


async def _cancelled_with_webhooks(store: InvocationStore, users: list[str], url: str) -> list[str]:
    """One invocation per user with ``url`` as its webhook, cancelled while queued: a notification each."""
    ids = []
    for user in users:
        session = await store.create_session("weather", user)
        invocation_id = await store.enqueue("weather", user, session.id, "hi", None, None, webhook=url)
        await store.cancel(invocation_id, "changed my mind")
        ids.append(invocation_id)
    return ids


async def _homes(store: InvocationStore, key_names: list[str]) -> set[int]:
    client: RedisCluster = store.redis
    return {client.get_node_from_key(name).port for name in key_names}


async def test_on_a_cluster_notifications_of_users_on_every_master_are_each_delivered_once_signed(
        redis_cluster, store, hook, user):
    hook.start()
    users = _users_on_every_master("weather", user)
    ids = await _cancelled_with_webhooks(store, users, hook.url)
    outboxes = [keys.webhook_outbox(shard_of("weather", u, cluster=True)) for u in users]
    assert [await store.redis.hlen(key) for key in outboxes] == [1, 1, 1]  # each in its user's shard
    assert await _homes(store, outboxes) == {node.port for node in redis_cluster.nodes}
    deliverer = WebhookDeliverer(store, _fast())
    stats = await _deliver_until_settled(deliverer, store.redis)
    await deliverer.aclose()
    assert stats == {"delivered": 3.0, "failed": 0.0, "dead": 0.0, "pending": 0.0, "dead_letters": 0.0}
    assert sorted(headers["webhook-id"] for headers, _ in hook.requests) == sorted(f"{i}-1" for i in ids)
    assert all(verify(KEY, headers, body) for headers, body in hook.requests)
    assert sorted(json.loads(body)["data"]["invocationId"] for _, body in hook.requests) == sorted(ids)


async def test_on_a_cluster_dead_letters_of_every_shard_are_paged_newest_first_found_and_redelivered(
        store, hook, user):
    # the receiver does not listen yet: every attempt is refused until the retry window closes
    users = _users_on_every_master("weather", user + "-dead")
    ids = await _cancelled_with_webhooks(store, users, hook.url)
    deliverer = WebhookDeliverer(store, _fast(retry_for_s=0.2))
    stats = await _deliver_until_settled(deliverer, store.redis)
    assert (stats["delivered"], stats["dead"], stats["dead_letters"], stats["pending"]) == (0.0, 3.0, 3.0, 0.0)

    first, cursor = await outbox.dead_letters(store.redis, limit=2)
    rest, end = await outbox.dead_letters(store.redis, limit=2, after=cursor)
    letters = first + rest
    assert end is None and len(first) == 2
    assert sorted(letter["inv"] for letter in letters) == sorted(ids)
    assert [letter["member"] for letter in letters] == sorted((letter["member"] for letter in letters), reverse=True)
    for letter in letters:
        assert await outbox.dead_letter(store.redis, letter["id"]) == letter
    assert await outbox.dead_letter(store.redis, "e-nothing-1") is None

    hook.start()
    assert [await outbox.redeliver(store.redis, letter) for letter in letters] == [True, True, True]
    stats = await _deliver_until_settled(deliverer, store.redis)
    await deliverer.aclose()
    assert (stats["delivered"], stats["dead_letters"], stats["pending"]) == (3.0, 0.0, 0.0)
    assert sorted(json.loads(body)["data"]["invocationId"] for _, body in hook.requests) == sorted(ids)
