"""A client leaving a session stream releases the API's blocking read on Redis (no leaked readers)."""

from __future__ import annotations

import asyncio

import redis.asyncio as aioredis

from .conftest import ALICE_KEY, client


async def _blocked_readers(redis) -> int:
    # Blocked now (flag b), not only idle after an XREAD: the API keeps connections for its blocking reads.
    return sum(1 for entry in await redis.client_list() if entry.get("cmd") == "xread" and "b" in entry.get("flags", ""))


async def test_leaving_a_session_stream_leaves_no_blocked_reader_behind(stack):
    redis = aioredis.Redis.from_url(stack.redis.url, decode_responses=True)
    try:
        async with client(stack, ALICE_KEY) as http:
            await http.post("/apps/weather/users/alice/sessions", json={"sessionId": "idle-stream"})
            async with http.stream("GET", "/apps/weather/users/alice/sessions/idle-stream/events") as response:
                while await _blocked_readers(redis) == 0:
                    await asyncio.sleep(0.02)  # the API is now blocked reading the empty stream for us
                assert response.status_code == 200
        remaining = 1
        for _ in range(250):
            remaining = await _blocked_readers(redis)
            if remaining == 0:
                break
            await asyncio.sleep(0.02)
    finally:
        await redis.aclose()
    assert remaining == 0
