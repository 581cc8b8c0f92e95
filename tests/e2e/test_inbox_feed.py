"""1,000 open ``/inbox/events`` connections against real agentq api and worker processes and a real redis-server:
idle, they cost Redis nothing per second; a park reaches every one of them that may see it, and none that may
not (another user's key, or a filter to another user). The figures (Redis commands per second while idle, the time from the park to each connection) are printed,
not asserted: this machine is shared, and timing belongs to the benchmarks."""

from __future__ import annotations

import asyncio
import statistics
import time
import uuid

import httpx
import pytest
import redis.asyncio as aioredis

from api.streams.sse_client import read_frames
from runtime.redis_store import keys

from .conftest import ADMIN_KEY, ALICE_KEY, BOB_KEY, user_message

CONNECTIONS = 1_000
BOBS = 10  # of them, with bob's key: alice's park is not theirs to see
FILTERED = 10  # then with the admin's key but ?user=bob: not theirs either
IDLE_S = 3.0


class Connection:
    """One open /inbox/events stream, noting when each frame arrived."""

    def __init__(self, http: httpx.AsyncClient, key: str, query: str = ""):
        self.http, self.key, self.query = http, key, query
        self.frames: list[tuple[float, dict]] = []
        self.open = asyncio.Event()
        self.changed = asyncio.Event()

    async def run(self) -> None:
        headers = {"Authorization": f"Bearer {self.key}"}
        async with self.http.stream("GET", f"/inbox/events{self.query}", headers=headers) as response:
            assert response.status_code == 200
            async for frame in read_frames(response):
                self.frames.append((time.time(), frame.data))
                self.open.set()
                if "changes" in frame.data or "reload" in frame.data:
                    self.changed.set()

    def arrival(self, invocation_id: str) -> float | None:
        """When the change of ``invocation_id`` arrived (None: it did not)."""
        return next((at for at, data in self.frames
                     for change in data.get("changes", []) if change["invocationId"] == invocation_id), None)


async def _commands(redis) -> tuple[int, dict[str, int]]:
    stats = await redis.info("commandstats")
    total = int((await redis.info("stats"))["total_commands_processed"])
    return total, {name.removeprefix("cmdstat_"): int(value["calls"]) for name, value in stats.items()}


async def _idle_rate(redis) -> tuple[float, dict[str, int]]:
    """Commands per second the server runs while nothing happens (every process's: the workers beat too)."""
    total, by_name = await _commands(redis)
    await asyncio.sleep(IDLE_S)
    total_after, by_name_after = await _commands(redis)
    delta = {name: calls - by_name.get(name, 0) for name, calls in by_name_after.items()
             if calls != by_name.get(name, 0)}
    return (total_after - total - 2) / IDLE_S, delta  # less the two INFO calls of the first look


@pytest.mark.timeout(300)
async def test_a_thousand_idle_inbox_streams_cost_redis_nothing_and_a_park_reaches_each_that_may_see_it(stack):
    redis = aioredis.Redis.from_url(stack.redis.url, decode_responses=True)
    limits = httpx.Limits(max_connections=CONNECTIONS + 50, max_keepalive_connections=CONNECTIONS + 50)
    async with httpx.AsyncClient(base_url=stack.base_url, limits=limits, timeout=60) as http:
        headers = {"Authorization": f"Bearer {ALICE_KEY}"}
        session_id = "s-" + uuid.uuid4().hex[:8]
        assert (await http.post("/apps/reimbursement/users/alice/sessions", json={"sessionId": session_id},
                                headers=headers)).status_code == 200
        without, _ = await _idle_rate(redis)
        connections = [Connection(http, BOB_KEY) if n < BOBS else
                       Connection(http, ADMIN_KEY, "?user=bob") if n < BOBS + FILTERED else
                       Connection(http, ADMIN_KEY) for n in range(CONNECTIONS)]
        tasks = [asyncio.create_task(c.run()) for c in connections]
        try:
            await asyncio.wait_for(asyncio.gather(*(c.open.wait() for c in connections)), 120)
            with_streams, calls = await _idle_rate(redis)
            response = await http.post(f"/apps/reimbursement/users/alice/sessions/{session_id}/invocations",
                                       json={"newMessage": user_message("Please reimburse $1200 for a trip.")},
                                       headers=headers)
            invocation_id = response.json()["invocationId"]
            admins, others = connections[BOBS + FILTERED:], connections[:BOBS + FILTERED]
            await asyncio.wait_for(asyncio.gather(*(c.changed.wait() for c in admins)), 60)
            await asyncio.sleep(0.5)  # time for a change that should not reach the others to arrive anyway
            [(entry_id, fields)] = [entry for entry in await redis.xrange(keys.inbox_changes(""))
                                    if entry[1]["inv"] == invocation_id and entry[1]["change"] == "parked"]
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
        closed, _ = await _idle_rate(redis)  # the same again once they are gone: the workers' own traffic
    await redis.aclose()
    parked_at = int(entry_id.split("-")[0]) / 1000
    delays = sorted((c.arrival(invocation_id) - parked_at) * 1000 for c in admins)
    assert (fields["app"], fields["user"]) == ("reimbursement", "alice")
    assert [c.arrival(invocation_id) is not None for c in admins] == [True] * len(admins)
    assert [[data for _, data in c.frames[1:]] for c in others] == [[]] * len(others)
    assert [list(c.frames[0][1]) for c in connections] == [["total"]] * CONNECTIONS
    print(f"\nRedis commands/s while idle (all processes: workers beat): {without:.1f} before any inbox stream, "
          f"{with_streams:.1f} with {CONNECTIONS} open, {closed:.1f} after they closed; commands in the idle "
          f"window with them open: {calls}")
    print(f"park -> change frame on each of {len(admins)} connections: p50 {statistics.median(delays):.0f} ms, "
          f"p99 {delays[int(len(delays) * 0.99) - 1]:.0f} ms, max {delays[-1]:.0f} ms")
