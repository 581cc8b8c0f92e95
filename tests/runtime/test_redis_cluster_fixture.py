"""The cluster fixture itself: three real masters sharing the slots, gone after teardown."""

from __future__ import annotations

import socket

import redis
from redis.cluster import RedisCluster

from tests.redis_cluster import SLOTS, LocalRedisCluster, slot_ranges


def test_slots_are_split_between_the_masters_without_gap_or_overlap():
    ranges = slot_ranges(3)
    assert [(r.start, r.stop) for r in ranges] == [(0, 5461), (5461, 10922), (10922, SLOTS)]


def test_fixture_cluster_serves_every_slot_from_three_masters(redis_cluster, redis_cluster_url):
    client = RedisCluster(host="127.0.0.1", port=redis_cluster.nodes[0].port, decode_responses=True)
    try:
        shards = client.cluster_slots(target_nodes=RedisCluster.RANDOM)
        served = sorted((start, end, node[1]) for (start, end), node in
                        ((slots, info["primary"]) for slots, info in shards.items()))
        ports = [node.port for node in redis_cluster.nodes]
        assert served == [(0, 5460, ports[0]), (5461, 10921, ports[1]), (10922, SLOTS - 1, ports[2])]
        tagged = {f"{{tag{index}}}:k": str(index) for index in range(30)}
        for key, value in tagged.items():
            client.set(key, value)
        assert {key: client.get(key) for key in tagged} == tagged
        assert {client.get_node_from_key(key).port for key in tagged} == set(ports)  # every master holds some
    finally:
        client.close()


def test_stopped_cluster_leaves_no_node_listening(tmp_path):
    cluster = LocalRedisCluster(tmp_path).start()
    ports = [node.port for node in cluster.nodes]
    with redis.Redis(port=ports[0], decode_responses=True) as client:
        assert client.execute_command("CLUSTER INFO")["cluster_state"] == "ok"
    cluster.stop()
    for port in ports:
        with socket.socket() as sock:
            assert sock.connect_ex(("127.0.0.1", port)) != 0
