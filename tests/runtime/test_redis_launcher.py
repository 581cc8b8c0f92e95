"""EmbeddedRedis: a private redis-server that answers when start() returns and keeps its data across restarts."""

from __future__ import annotations

import redis
import redis.asyncio as aioredis

from runtime.events import Event, EventActions
from runtime.redis_store.launcher import EmbeddedRedis, find_redis_server
from runtime.redis_store.streams import read_stream
from runtime.sessions import RedisSessionService
from tests.stream_writers import publish_status


def test_redis_server_binary_is_found():
    assert find_redis_server().endswith("redis-server")


def test_embedded_redis_answers_on_a_unix_socket_and_stops(tmp_path):
    with EmbeddedRedis(tmp_path, unix_socket=True, appendonly=False) as server:
        client = redis.Redis.from_url(server.url)
        assert (server.url, client.ping()) == (f"unix://{tmp_path}/redis.sock", True)
        client.close()
    assert not server.running


async def test_sessions_and_streams_survive_a_restart_with_the_aof(tmp_path):
    server = EmbeddedRedis(tmp_path).start()
    try:
        service = RedisSessionService(server.url)
        session = await service.create_session(app_name="app", user_id="ann", session_id="s1", state={"k": 1})
        events = [Event(author="agent", invocation_id="e-1", actions=EventActions(state_delta={"n": i, "user:u": i}))
                  for i in range(3)]
        for event in events:
            await service.append_event(session, event)
        client = aioredis.Redis.from_url(server.url, decode_responses=True)
        await publish_status(client, "app", "ann", "s1", "e-1", "completed", {"ok": True})
        before = (await service.get_session(app_name="app", user_id="ann", session_id="s1"), await read_stream(
            client, "app", "ann", "s1"))
        await client.aclose()
        await service.aclose()

        server.stop()
        assert not server.running
        server.start()

        service = RedisSessionService(server.url)
        client = aioredis.Redis.from_url(server.url, decode_responses=True)
        after = (await service.get_session(app_name="app", user_id="ann", session_id="s1"), await read_stream(
            client, "app", "ann", "s1"))
        assert after[0].model_dump() == before[0].model_dump()
        assert after[1] == before[1] and len(after[1]) == 4
        await service.append_event(after[0], Event(author="agent", invocation_id="e-2"))  # scripts reload
        assert (await service.get_session(app_name="app", user_id="ann", session_id="s1")).version == 4
        await client.aclose()
        await service.aclose()
    finally:
        server.stop()


def test_a_server_that_cannot_start_is_reported_with_its_log(tmp_path):
    from runtime.errors import UsageError

    with EmbeddedRedis(tmp_path / "first", appendonly=False) as first:
        second = EmbeddedRedis(tmp_path / "second", port=first.port, appendonly=False)
        try:
            second.start()
        except UsageError as exc:
            assert "redis-server exited" in str(exc) and "Address already in use" in str(exc)
        else:
            raise AssertionError("a second server on a taken port started")
        finally:
            second.stop()


def test_a_port_it_picked_that_another_process_took_meanwhile_is_replaced_by_a_free_one(tmp_path, monkeypatch):
    import socket

    from runtime.redis_store import launcher

    with socket.socket() as holder:  # another process's listener on the port EmbeddedRedis picked
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        taken = holder.getsockname()[1]
        picks = iter([taken])
        real_free_port = launcher.free_port
        monkeypatch.setattr(launcher, "free_port", lambda: next(picks, None) or real_free_port())
        with EmbeddedRedis(tmp_path, appendonly=False) as server:
            assert server.port != taken
            with redis.Redis.from_url(server.url) as client:
                assert client.ping()
