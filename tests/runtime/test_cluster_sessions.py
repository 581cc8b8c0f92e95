"""The app's user set on a real three-master Redis Cluster: one copy per shard in use, in each user's own slot
(written by the session's creation script), merged by ``list_sessions`` without a user; on one node the one
key as before."""

from __future__ import annotations

from redis.cluster import RedisCluster

from runtime.redis_store import keys
from runtime.redis_store.slots import shard_of
from runtime.sessions import RedisSessionService


async def test_on_a_cluster_each_users_entry_in_the_apps_user_set_lives_in_its_own_shard_and_listing_merges_them(
        redis_cluster, redis_cluster_url):
    service = RedisSessionService(redis_cluster_url)
    users = [f"user{index}" for index in range(12)]
    try:
        for user in users:
            await service.create_session(app_name="app", user_id=user, session_id="s1")
        await service.create_session(app_name="other", user_id="zed", session_id="s1")
        listed = await service.list_sessions(app_name="app")
    finally:
        await service.aclose()
    assert sorted((s.user_id, s.id) for s in listed.sessions) == [(user, "s1") for user in sorted(users)]
    inspector = RedisCluster(host="127.0.0.1", port=redis_cluster.nodes[0].port, decode_responses=True)
    try:
        copies = {user: keys.app_users("app", shard_of("app", user, cluster=True)) for user in users}
        members = {user: inspector.smembers(key) for user, key in copies.items()}
        homes = {inspector.get_node_from_key(key).port for key in copies.values()}
        registered = inspector.smembers(keys.shards())
        single = inspector.exists(keys.app_users("app"))
        same_slot = all(inspector.keyslot(key) == inspector.keyslot(keys.user_sessions("app", user))
                        for user, key in copies.items())
    finally:
        inspector.close()
    assert all(user in found for user, found in members.items())
    assert len(homes) > 1 and same_slot  # spread over the masters, each beside its user's keys
    assert {shard_of("app", user, cluster=True) for user in users} <= registered
    assert single == 0  # no one key every creation writes to


def test_on_one_node_the_apps_user_set_and_the_idle_expiries_keep_their_names():
    assert keys.app_users("app") == "agentq:{app}:users"
    assert keys.session_expiries() == "agentq:session_expiries"
    assert keys.session_expiries("s:1") == "agentq:{s:1}:session_expiries"
    assert shard_of("app", "u", cluster=False) == ""


async def test_on_a_cluster_a_session_read_with_its_app_state_goes_through_the_mux_alone(redis_cluster_url):
    writer = RedisSessionService(redis_cluster_url)
    reader = RedisSessionService(redis_cluster_url)
    try:
        await writer.create_session(app_name="app", user_id="ann", session_id="s1",
                                    state={"app:plan": "gold", "user:name": "Ann", "turn": 1})
        read = await reader.get_session(app_name="app", user_id="ann", session_id="s1")
        made = dict(reader._clients._by_loop)  # the loop's redis-py clients (RedisCluster), made on first use
    finally:
        await writer.aclose()
        await reader.aclose()
    assert read.state == {"app:plan": "gold", "user:name": "Ann", "turn": 1}
    assert made == {}  # app state, in a slot of its own, was read on the mux with the read script
