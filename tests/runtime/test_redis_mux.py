"""MuxConnection: many coroutines share one pipelined connection and each gets its own reply."""

from __future__ import annotations

import asyncio

import pytest
import redis.asyncio as aioredis
from redis.asyncio.connection import parse_url
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import NoScriptError, ResponseError

from runtime.events import Event
from runtime.redis_store.launcher import EmbeddedRedis
from runtime.redis_store.mux import MuxConnection, _Protocol, pack
from runtime.sessions import RedisSessionService


@pytest.fixture
async def mux(redis_url):
    connection = MuxConnection(redis_url)
    yield connection
    await connection.aclose()


async def test_concurrent_commands_each_get_their_own_reply(mux):
    await asyncio.gather(*(mux.execute_command("SET", f"k{i}", f"v{i}") for i in range(500)))
    replies = await asyncio.gather(*(mux.execute_command("GET", f"k{i}") for i in range(500)))
    assert replies == [f"v{i}" for i in range(500)]


async def test_an_error_reply_fails_only_its_own_command(mux):
    results = await asyncio.gather(
        mux.execute_command("SET", "a", "1"), mux.execute_command("INCRBY", "a", "x"),
        mux.execute_command("EVALSHA", "0" * 40, 0), mux.execute_command("GET", "a"), return_exceptions=True,
    )
    assert results[0] == "OK" and results[3] == "1"
    assert type(results[1]) is ResponseError and "not an integer" in str(results[1])
    assert type(results[2]) is NoScriptError


async def test_a_cancelled_caller_leaves_the_replies_of_others_in_step(mux):
    await mux.execute_command("SET", "a", "1")
    slow = asyncio.ensure_future(mux.execute_command("EVAL", "local n = 0 for i = 1, 200000 do n = n + i end return 7", 0))
    await asyncio.sleep(0)
    slow.cancel()
    assert await mux.execute_command("GET", "a") == "1"
    assert await mux.execute_command("INCR", "counter") == 1


async def test_the_database_number_in_the_url_is_selected(redis_server):
    url = redis_server.url.rsplit("/", 1)[0] + "/3"
    mux = MuxConnection(url)
    await mux.execute_command("SET", "in-db-3", "yes")
    plain = aioredis.Redis.from_url(url, decode_responses=True)
    assert await plain.get("in-db-3") == "yes"
    await plain.flushdb()
    await plain.aclose()
    await mux.aclose()


async def test_an_unreachable_server_raises_a_connection_error(tmp_path):
    mux = MuxConnection(f"unix://{tmp_path}/nobody.sock")
    with pytest.raises(RedisConnectionError, match="cannot connect"):
        await mux.execute_command("PING")


async def test_a_live_service_keeps_working_across_a_redis_restart(tmp_path):
    server = EmbeddedRedis(tmp_path).start()
    service = RedisSessionService(server.url)
    try:
        session = await service.create_session(app_name="app", user_id="ann", session_id="s1")
        await service.append_event(session, Event(author="agent", invocation_id="e-1", id="before"))
        server.stop()
        server.start()
        await service.append_event(session, Event(author="agent", invocation_id="e-1", id="after"))
        stored = await service.get_session(app_name="app", user_id="ann", session_id="s1")
        assert ([event.id for event in stored.events], stored.version) == (["before", "after"], 2)
    finally:
        await service.aclose()
        server.stop()


async def test_commands_in_flight_fail_when_the_server_goes_away_and_the_next_one_reconnects(tmp_path):
    server = EmbeddedRedis(tmp_path).start()
    mux = MuxConnection(server.url)
    try:
        await mux.execute_command("PING")  # connected
        waiting = asyncio.ensure_future(mux.execute_command("BLPOP", "never", 0))  # in flight until the end
        await asyncio.sleep(0)  # let it be written
        await asyncio.get_running_loop().run_in_executor(None, server.stop)
        with pytest.raises(RedisConnectionError, match="connection to Redis lost"):
            await waiting
        server.start()
        assert await mux.execute_command("PING") == "PONG"
    finally:
        await mux.aclose()
        server.stop()


async def test_a_command_queued_on_a_connection_already_lost_fails_at_once_instead_of_waiting_forever(redis_url):
    # The race a CLIENT KILL storm hit: the callers waiting for a reconnect resume a loop iteration or two after
    # it completed, and the new connection can be dropped in between. Their commands used to be queued on it,
    # never written and never failed, leaving an invocation 'running' for good.
    params = parse_url(redis_url)
    loop = asyncio.get_running_loop()
    _, protocol = await loop.create_connection(_Protocol, params["host"], params["port"])
    protocol.transport.close()
    while not protocol.closed:  # connection_lost runs on a later loop iteration
        await asyncio.sleep(0)
    reply = loop.create_future()
    protocol.send(pack(("PING",)), reply)

    assert reply.done()
    with pytest.raises(RedisConnectionError, match="lost before the command was sent"):
        reply.result()
