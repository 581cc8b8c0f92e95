"""ClusterMux on a real three-master Redis Cluster: one pipelined connection per master, commands routed by hash
slot, a slot moved under it (MOVED), a slot half moved (ASK, TRYAGAIN), a node that lost its scripts (NOSCRIPT
raised, never re-sent by itself), and a master killed and replaced by its replica."""

from __future__ import annotations

import asyncio

import pytest
import redis
from redis.crc import key_slot
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import NoScriptError, ResponseError

from runtime.redis_store.availability import is_store_unavailable
from runtime.redis_store.cluster_mux import ClusterMux
from runtime.redis_store.mux import queue_command
from tests.redis_cluster import LocalRedisCluster

COUNT = "return redis.call('INCR', KEYS[1])"
"""A script whose every run shows: it counts its runs in its key."""
COUNT_TWO = "redis.call('INCR', KEYS[1]); return redis.call('INCR', KEYS[2])"


@pytest.fixture
def cluster(tmp_path):
    """A cluster of its own: these tests move slots and kill masters."""
    with LocalRedisCluster(tmp_path / "cluster") as started:
        yield started


def _client(node) -> redis.Redis:
    return redis.Redis(host="127.0.0.1", port=node.port, decode_responses=True)


def _other_master(cluster, slot: int):
    source = cluster.master_of_slot(slot)
    return source, next(node for node in cluster.nodes if node is not source)


def _connected_clients(cluster) -> list[int]:
    counts = []
    for node in cluster.nodes:
        with _client(node) as client:
            counts.append(int(client.info("clients")["connected_clients"]))
    return counts


async def test_each_master_gets_one_pipelined_connection_and_each_command_goes_to_its_slots_master(cluster):
    before = _connected_clients(cluster)
    mux = ClusterMux(cluster.url)
    try:
        replies = await asyncio.gather(*(mux.execute_command("INCR", f"agentq:{{u{n}}}:count") for n in range(600)))
        during = _connected_clients(cluster)
    finally:
        await mux.aclose()
    assert replies == [1] * 600
    assert [now - then for now, then in zip(during, before, strict=True)] == [1, 1, 1]
    for n in range(600):
        key = f"agentq:{{u{n}}}:count"
        with _client(cluster.master_of_slot(key_slot(key.encode()))) as owner:
            assert owner.get(key) == "1", f"{key!r} is not on the master of its slot"


async def test_a_slot_moved_after_the_map_was_read_is_followed_and_the_script_runs_once_on_its_new_master(cluster):
    key = "agentq:{mover}:runs"
    slot = key_slot(key.encode())
    source, target = _other_master(cluster, slot)
    mux = ClusterMux(cluster.url)
    try:
        sha = await mux.script_load(COUNT)
        assert await mux.evalsha(sha, 1, key) == 1
        refreshes = mux.refreshes
        assert await asyncio.to_thread(cluster.migrate_slot, slot, target) == 1

        assert await mux.evalsha(sha, 1, key) == 2  # MOVED from the source: run on the target, once
        assert await queue_command(mux, "INCR", key) == 3  # the slot points at the target now: no MOVED
        await mux.refresh()
        assert mux.refreshes > refreshes
    finally:
        await mux.aclose()
    with _client(target) as new_master, _client(source) as old_master:
        assert new_master.get(key) == "3"
        old, new = old_master.info("commandstats"), new_master.info("commandstats")
    # the source ran the first call and turned the second away (MOVED); the target ran the second and the INCR
    assert (old["cmdstat_evalsha"]["calls"], old["cmdstat_evalsha"]["rejected_calls"]) == (1, 1)
    assert old["cmdstat_incr"]["calls"] == 1
    assert (new["cmdstat_evalsha"]["calls"], new["cmdstat_incr"]["calls"]) == (1, 2)


async def test_a_moved_script_whose_new_master_lacks_it_gets_noscript_and_is_not_run_until_loaded_again(cluster):
    key = "agentq:{flushed}:runs"
    slot = key_slot(key.encode())
    _, target = _other_master(cluster, slot)
    mux = ClusterMux(cluster.url)
    try:
        sha = await mux.script_load(COUNT)
        assert await mux.evalsha(sha, 1, key) == 1
        await asyncio.to_thread(cluster.migrate_slot, slot, target)
        with _client(target) as new_master:
            new_master.script_flush()

        with pytest.raises(NoScriptError):
            await mux.evalsha(sha, 1, key)
        with _client(target) as new_master:
            assert new_master.get(key) == "1"  # not run, and not sent again with its source by the mux
        assert await mux.script_load(COUNT) == sha
        assert await mux.evalsha(sha, 1, key) == 2
    finally:
        await mux.aclose()


async def test_a_half_moved_slot_is_read_and_written_through_ask_and_a_split_script_is_refused_unrun(cluster):
    tag = "{halfway}"
    moved, stayed, new = f"agentq:{tag}:moved", f"agentq:{tag}:stayed", f"agentq:{tag}:new"
    slot = key_slot(moved.encode())
    source, target = _other_master(cluster, slot)
    mux = ClusterMux(cluster.url)
    try:
        sha = await mux.script_load(COUNT)
        two = await mux.script_load(COUNT_TWO)
        assert await mux.execute_command("SET", moved, "5") == "OK"
        assert await mux.execute_command("SET", stayed, "7") == "OK"
        with _client(source) as src, _client(target) as dst:  # half of what redis-cli --cluster reshard does
            dst.execute_command("CLUSTER SETSLOT", slot, "IMPORTING", cluster.node_id(source))
            src.execute_command("CLUSTER SETSLOT", slot, "MIGRATING", cluster.node_id(target))
            src.execute_command("MIGRATE", "127.0.0.1", target.port, "", 0, 5000, "KEYS", moved)

        assert await mux.execute_command("GET", moved) == "5"  # ASK: read on the target
        assert await queue_command(mux, "GET", moved) == "5"  # queued without awaiting: followed all the same
        assert await mux.evalsha(sha, 1, moved) == 6  # the script runs on the target, once
        assert await mux.execute_command("SET", new, "n") == "OK"  # a new key of a migrating slot: the target's
        assert await mux.execute_command("GET", stayed) == "7"  # still on the source, which answers it itself
        with pytest.raises(ResponseError, match="^TRYAGAIN") as refused:
            await mux.evalsha(two, 2, stayed, moved)  # its keys are on two nodes until the move ends
        assert is_store_unavailable(refused.value)
        with _client(source) as src, _client(target) as dst:
            assert (src.get(stayed), src.execute_command("CLUSTER COUNTKEYSINSLOT", slot)) == ("7", 1)
            assert dst.execute_command("CLUSTER COUNTKEYSINSLOT", slot) == 2
            assert dst.execute_command("CLUSTER GETKEYSINSLOT", slot, 10) == sorted([moved, new])
        with redis.Redis(host="127.0.0.1", port=target.port, decode_responses=True,
                         single_connection_client=True) as dst:
            dst.execute_command("ASKING")  # an importing node answers a key of the slot only after ASKING
            assert dst.mget(moved, new) == ["6", "n"]
    finally:
        await mux.aclose()


async def test_a_killed_master_fails_its_commands_as_away_and_its_promoted_replica_takes_them_next(tmp_path):
    with LocalRedisCluster(tmp_path / "cluster", replicas=True, node_timeout_ms=2000) as cluster:
        key = "agentq:{failing}:count"
        index = cluster.nodes.index(cluster.master_of_slot(key_slot(key.encode())))
        mux = ClusterMux(cluster.url)
        try:
            assert await mux.execute_command("INCR", key) == 1
            await asyncio.to_thread(cluster.kill_master, index)
            with pytest.raises(RedisConnectionError) as away:
                await mux.execute_command("INCR", key)
            assert is_store_unavailable(away.value)
            await asyncio.to_thread(cluster.wait_for_failover, index)

            for _ in range(100):  # each failure reads the map again; the first after the promotion finds it
                try:
                    value = await mux.execute_command("INCR", key)
                    break
                except RedisConnectionError:
                    await asyncio.sleep(0.1)
            else:
                pytest.fail("the promoted replica was never found")
        finally:
            await mux.aclose()
        assert value in (1, 2)  # 2 when the replica had the first INCR: asynchronous replication may lose it
        with _client(cluster.nodes[index]) as promoted:
            assert promoted.get(key) == str(value)
