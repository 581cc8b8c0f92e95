"""Worker liveness beats on a real three-master Redis Cluster: each worker beats in one of a fixed few copies
picked by its name, so a fleet's beats spread over the masters, and the reader merges every copy."""

from __future__ import annotations

from redis.asyncio.cluster import RedisCluster

from runtime.redis_store import keys
from worker.fleet import workers_alive as alive
from worker.records.store import InvocationStore


async def test_on_a_cluster_beats_spread_over_the_masters_and_every_beating_worker_is_read_alive(
        redis_cluster, redis_cluster_url):
    store = InvocationStore(redis_cluster_url, reads_only=True)
    names = [f"w{n}@host" for n in range(40)]
    try:
        for name in names:
            await alive.beater(store, name)()
        workers = await alive.alive_workers(store.redis)
        client: RedisCluster = store.redis  # initialised by the read: it knows which master serves each slot
        copies = {alive.beats_shard(name, cluster=True) for name in names}
        homes = {client.get_node_from_key(keys.workers_alive(shard)).port for shard in copies}
    finally:
        await store.aclose()
    assert len(copies) > 1 and len(homes) > 1  # not one key, not one master
    assert homes <= {node.port for node in redis_cluster.nodes}
    assert [worker.name for worker in workers] == sorted(names)
    assert all(worker.apps == [] for worker in workers)  # none announced itself in keys.workers()


def test_a_worker_beats_in_the_same_copy_every_time_and_on_one_node_in_the_one_key():
    assert alive.beats_shard("w1@host", cluster=True) == alive.beats_shard("w1@host", cluster=True)
    assert alive.beats_shard("w1@host", cluster=True).startswith("w:")
    assert alive.beats_shard("w1@host", cluster=False) == ""
    assert keys.workers_alive("") == "agentq:workers_alive"
    assert keys.workers_alive("w:3") == "agentq:{w:3}:workers_alive"
