"""The store on Redis Cluster: ``redis+cluster://`` URLs, and a session's keys kept in one slot of a real cluster."""

from __future__ import annotations

import pytest
from redis.asyncio import RedisCluster as RedisClusterClient
from redis.cluster import RedisCluster

from runtime.errors import UsageError
from runtime.events import Event, EventActions
from runtime.redis_store.cluster_mux import ClusterMux
from runtime.redis_store.connection import LoopClients
from runtime.redis_store.redis_url import ClusterUrl, database, parse_cluster_url
from runtime.sessions import RedisSessionService


def test_cluster_urls_are_parsed_and_mistakes_are_named():
    assert parse_cluster_url("redis+cluster://:pw@h1:7000,[::1]:7001,h3") == ClusterUrl(
        nodes=[("h1", 7000), ("::1", 7001), ("h3", 6379)], password="pw")
    assert parse_cluster_url("redis+cluster://u:p@h1:7000/0") == ClusterUrl(
        nodes=[("h1", 7000)], username="u", password="p")
    assert database("redis+cluster://h1:7000") == 0
    with pytest.raises(UsageError, match="a Redis Cluster has database 0 only, not '2'"):
        parse_cluster_url("redis+cluster://h1:7000/2")
    with pytest.raises(UsageError, match="'h1:x' in Redis URL .* has a bad port"):
        parse_cluster_url("redis+cluster://h1:x")
    with pytest.raises(UsageError, match="'' in Redis URL 'redis\\+cluster://h1:7000,' is not host:port"):
        parse_cluster_url("redis+cluster://h1:7000,")


async def test_a_cluster_url_gives_a_cluster_client_and_a_mux_per_master_that_hands_replies_over_as_sent(
        redis_cluster_url):
    clients = LoopClients(redis_cluster_url)
    try:
        assert clients.is_cluster
        assert isinstance(clients.get(), RedisClusterClient) and isinstance(clients.mux(), ClusterMux)
        await clients.get().hset("agentq:{t}:h", mapping={"a": "1", "b": "2"})
        await clients.get().sadd("agentq:{t}:s", "x")
        assert await clients.get().hgetall("agentq:{t}:h") == {"a": "1", "b": "2"}
        assert await clients.mux().execute_command("HGETALL", "agentq:{t}:h") == ["a", "1", "b", "2"]
        assert await clients.mux().execute_command("SMEMBERS", "agentq:{t}:s") == ["x"]
    finally:
        await clients.aclose()


async def test_each_session_keeps_its_keys_in_one_slot_while_users_spread_over_the_masters(redis_cluster,
                                                                                          redis_cluster_url):
    service = RedisSessionService(redis_cluster_url)
    users = [f"user{index}" for index in range(12)]
    try:
        for user in users:
            session = await service.create_session(app_name="app", user_id=user, session_id="s1")
            await service.append_event(session, Event(author="agent", invocation_id="e-1", actions=EventActions(
                state_delta={"n": 1, "user:u": user, "app:a": "shared"})))
        fetched = [await service.get_session(app_name="app", user_id=user, session_id="s1") for user in users]
    finally:
        await service.aclose()
    assert [(s.user_id, s.state, s.version, len(s.events)) for s in fetched] == [
        (user, {"n": 1, "user:u": user, "app:a": "shared"}, 1, 1) for user in users]
    inspector = RedisCluster(host="127.0.0.1", port=redis_cluster.nodes[0].port, decode_responses=True)
    try:
        slots_by_user: dict[str, set[int]] = {}
        for node in inspector.get_primaries():
            for key in inspector.scan_iter(match="agentq:{app/*", target_nodes=node):
                user = key.split("/", 1)[1].split("}", 1)[0]
                slots_by_user.setdefault(user, set()).add(inspector.keyslot(key))
        ports = {inspector.get_node_from_key(f"agentq:{{app/{user}}}:sessions").port for user in users}
    finally:
        inspector.close()
    assert sorted(slots_by_user) == sorted(users)
    assert all(len(slots) == 1 for slots in slots_by_user.values())
    assert ports == {node.port for node in redis_cluster.nodes}

