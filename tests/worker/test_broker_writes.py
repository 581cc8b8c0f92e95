"""worker.broker_writes keeps kombu's unacked bookkeeping exactly as kombu reads it back (real redis-server)."""

from __future__ import annotations

import json
import time

import pytest
import redis
from kombu import Connection

from worker import broker_writes


@pytest.fixture
def kombu_queue(redis_url):
    broker_writes.install()
    with Connection(redis_url) as connection:
        queue = connection.SimpleQueue("bookkeeping-test")
        yield queue
        queue.close()


def _eventually(check, timeout: float = 5.0):
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, "condition not reached"
        time.sleep(0.01)


def test_a_received_message_is_recorded_as_unacked_and_removed_on_ack(kombu_queue, redis_url):
    client = redis.Redis.from_url(redis_url)
    kombu_queue.put({"job": 1})
    message = kombu_queue.get(timeout=5)
    tag = message.delivery_tag
    _eventually(lambda: client.hexists("unacked", tag))
    raw, exchange, routing_key = json.loads(client.hget("unacked", tag))
    assert raw["properties"]["delivery_tag"] == tag  # the message itself, as kombu's restore expects
    assert routing_key == "bookkeeping-test"
    assert client.zscore("unacked_index", tag) is not None
    assert "_agentq_writer" in kombu_queue.consumer.channel.__dict__  # written by the fast path, not kombu's

    message.ack()
    _eventually(lambda: not client.hexists("unacked", tag) and client.zscore("unacked_index", tag) is None)


def test_a_requeued_message_is_restored_from_the_record_the_fast_path_wrote(kombu_queue, redis_url):
    client = redis.Redis.from_url(redis_url)
    kombu_queue.put({"job": 2})
    message = kombu_queue.get(timeout=5)
    message.requeue()  # reads the unacked record back: must see it even though its write was not awaited
    again = kombu_queue.get(timeout=5)
    assert again.payload == {"job": 2}
    again.ack()
    _eventually(lambda: client.hlen("unacked") == 0)
