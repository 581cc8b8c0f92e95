"""BlockingReads: each blocking stream read on a connection of its own, replies read back as from redis-py."""

from __future__ import annotations

import asyncio

import redis.asyncio as aioredis

from runtime.redis_store import keys
from runtime.redis_store.blocking_reads import BlockingReads
from runtime.redis_store.connection import LoopClients
from runtime.redis_store.streams import read_page


async def test_a_blocking_read_cancelled_while_it_waits_does_not_hold_up_the_next_read(redis_url):
    reads = BlockingReads(redis_url, max_connections=8)
    redis = aioredis.from_url(redis_url, decode_responses=True)
    try:
        waiting = asyncio.ensure_future(reads.execute_command("XREAD", "BLOCK", 0, "STREAMS", "left", "$"))
        while not any(client.get("cmd") == "xread" and "b" in client.get("flags", "") for client in await redis.client_list()):
            await asyncio.sleep(0.01)  # the read is waiting in Redis
        waiting.cancel()
        await asyncio.gather(waiting, return_exceptions=True)
        await redis.xadd("next", {"n": "wanted"})
        # Sent on the abandoned read's connection, this would wait behind it forever (BLOCK 0, nothing comes)
        async with asyncio.timeout(10):
            reply = await reads.execute_command("XREAD", "COUNT", 10, "BLOCK", 1000, "STREAMS", "next", "0-0")
        assert [(stream, [fields for _, fields in entries]) for stream, entries in reply] == [("next", [["n", "wanted"]])]
    finally:
        await reads.aclose()
        await redis.aclose()


async def test_a_page_read_through_blocking_reads_is_the_page_redis_py_reads(redis_url):
    clients = LoopClients(redis_url)
    redis = clients.get()
    stream = keys.session_stream("app", "ann", "s1")
    try:
        for index, invocation in enumerate(["e-1", "e-2", "e-1"]):
            await redis.xadd(stream, {"kind": "event", "inv": invocation, "data": f'{{"n": {index}}}'})
        assert isinstance(clients.blocking(), BlockingReads)
        through_mux = await read_page(clients.mux(), "app", "ann", "s1", invocation_id="e-1")  # no blocking there
        for block_ms in (None, 1000):
            through_reads = await read_page(clients.blocking(), "app", "ann", "s1", invocation_id="e-1",
                                            block_ms=block_ms)
            through_redis_py = await read_page(redis, "app", "ann", "s1", invocation_id="e-1", block_ms=block_ms)
            assert through_reads == through_mux == through_redis_py
            assert [entry.data for entry in through_reads[0]] == [{"n": 0}, {"n": 2}]
    finally:
        await clients.aclose()
