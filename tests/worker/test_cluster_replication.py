"""``AGENTQ_REDIS_MIN_REPLICAS`` on a real Redis Cluster with a replica per master: the wait runs on the master
that took the write (after a mark in the written key's slot), follows a slot that moved, and refuses to count
a write no replica has."""

from __future__ import annotations

import os
import signal

import pytest
import redis
from redis.asyncio.cluster import RedisCluster
from redis.crc import key_slot

from runtime.errors import UsageError
from runtime.redis_store import keys
from runtime.redis_store.replication import NotReplicatedError, min_replicas, wait_for_replicas
from tests.redis_cluster import LocalRedisCluster


@pytest.fixture
def one_replica_required(monkeypatch):
    monkeypatch.setenv("AGENTQ_REDIS_MIN_REPLICAS", "1")
    min_replicas.cache_clear()
    yield
    min_replicas.cache_clear()


@pytest.fixture
def cluster(tmp_path):
    with LocalRedisCluster(tmp_path, replicas=True, node_timeout_ms=2000) as cluster:
        yield cluster


@pytest.fixture
async def client(cluster):
    client = RedisCluster(host="127.0.0.1", port=cluster.nodes[0].port, decode_responses=True)
    yield client
    await client.aclose()


def _replica_has(cluster: LocalRedisCluster, index: int, key: str) -> bool:
    with redis.Redis(port=cluster.replicas[index].port, decode_responses=True) as replica:
        replica.execute_command("READONLY")
        return replica.exists(key) == 1


@pytest.mark.timeout(120)
async def test_a_write_counts_once_the_replica_of_the_master_that_took_it_has_it(cluster, client,
                                                                                  one_replica_required):
    key = keys.session_meta("app", "ann", "s1")
    await client.hset(key, "version", "1")
    await wait_for_replicas(client, "event 'e1'", key=key)
    master = cluster.nodes.index(cluster.master_of_slot(key_slot(key.encode())))
    assert _replica_has(cluster, master, key)
    assert _replica_has(cluster, master, keys.replication_mark(key))  # the mark went to that master too
    assert keys.replication_mark(key) == "agentq:{app/ann}:replicated"


@pytest.mark.timeout(120)
async def test_without_the_written_key_a_cluster_wait_is_refused_naming_why(client, one_replica_required):
    with pytest.raises(UsageError, match="event 'e1': waiting for replicas on Redis Cluster needs the written key"):
        await wait_for_replicas(client, "event 'e1'")


@pytest.mark.timeout(120)
async def test_a_write_no_replica_took_is_not_counted(cluster, client, one_replica_required):
    key = keys.session_meta("app", "bob", "s1")
    master = cluster.nodes.index(cluster.master_of_slot(key_slot(key.encode())))
    with redis.Redis(port=cluster.replicas[master].port) as replica:
        pid = int(replica.info("server")["process_id"])
    os.kill(pid, signal.SIGSTOP)  # the replica stops taking the stream, its link stays up
    try:
        await client.hset(key, "version", "1")
        with pytest.raises(NotReplicatedError, match="event 'e2': 0 of 1 replicas acknowledged it within 2000 ms"):
            await wait_for_replicas(client, "event 'e2'", key=key)
    finally:
        os.kill(pid, signal.SIGCONT)


@pytest.mark.timeout(120)
async def test_the_wait_follows_a_slot_that_moved_to_another_master(cluster, client, one_replica_required):
    key = keys.session_meta("app", "cid", "s1")
    slot = key_slot(key.encode())
    await client.hset(key, "version", "1")
    source = cluster.master_of_slot(slot)
    target = next(node for node in cluster.nodes if node is not source)
    assert cluster.migrate_slot(slot, target) == 1
    await wait_for_replicas(client, "event 'e3'", key=key)  # the client still routes the slot to the source
    assert _replica_has(cluster, cluster.nodes.index(target), keys.replication_mark(key))
