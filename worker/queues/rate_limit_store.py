"""The Redis side of the API's rate limits and in-flight quotas (``worker.queues.rate_limits`` holds the rules).

Kept here because the API reads and writes Redis only through the worker package: one Lua call (``rate/admit``)
checks and takes both subjects' token buckets and in-flight places at once; a reservation becomes the started
invocation's id; settled invocations are pruned from an in-flight set when a cap is hit.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from runtime.errors import InvocationNotFoundError
from runtime.redis_store import keys
from runtime.redis_store.codec import text
from runtime.redis_store.scripts import RATE_ADMIT

IN_FLIGHT = ("queued", "running", "parked")
RESERVATION_TTL_MS = 60_000  # a reservation whose enqueue never finished (the API died) stops counting then
INFLIGHT_TTL_MS = 7 * 24 * 3600 * 1000  # an idle subject's set is dropped after a week without enqueues


class RateLimitStore:
    """Buckets and in-flight sets per subject (``p:<principal>``, ``u:<app>/<user>``), one client per store URL."""

    def __init__(self) -> None:
        self._redis: dict[str, Any] = {}

    def _client(self, redis_url: str) -> Any:
        if redis_url not in self._redis:  # created on first use, on the loop that uses it
            from runtime.redis_store.redis_url import redis_client_from_url

            self._redis[redis_url] = redis_client_from_url(redis_url)
        return self._redis[redis_url]

    async def admit(self, redis_url: str, subjects: tuple[str, str], reservation: str, *, principal: tuple,
                    scope: tuple) -> tuple[int, int, str]:
        """(0: admitted | 1: rate | 2: in flight, the figure (ms to wait or places used), which subject).
        ``principal`` and ``scope`` are (rate, burst, in-flight cap)."""
        reply = await RATE_ADMIT(
            self._client(redis_url), principal_bucket=keys.rate_bucket(subjects[0]),
            principal_inflight=keys.rate_inflight(subjects[0]), scope_bucket=keys.rate_bucket(subjects[1]),
            scope_inflight=keys.rate_inflight(subjects[1]), now_ms=int(time.time() * 1000),
            principal_rate=principal[0], principal_burst=principal[1], principal_inflight_max=principal[2],
            scope_rate=scope[0], scope_burst=scope[1], scope_inflight_max=scope[2], reservation=reservation,
            reservation_ttl_ms=RESERVATION_TTL_MS, inflight_ttl_ms=INFLIGHT_TTL_MS)
        return (int(reply[0]), int(reply[1]) if len(reply) > 1 else 0, text(reply[2]) if len(reply) > 2 else "")

    async def prune(self, redis_url: str, queue: Any, subject: str) -> bool:
        """Drop the settled (or gone) invocations of ``subject``'s in-flight set; True when any was dropped."""
        redis, inflight = self._client(redis_url), keys.rate_inflight(subject)
        ids = [m for m in (text(raw) for raw in await redis.zrange(inflight, 0, -1)) if not m.startswith("r:")]
        records = await asyncio.gather(*(queue.get(i) for i in ids), return_exceptions=True)
        settled = [i for i, record in zip(ids, records, strict=True)
                   if isinstance(record, InvocationNotFoundError) or (
                       not isinstance(record, BaseException) and record.status not in IN_FLIGHT)]
        if settled:
            await redis.zrem(inflight, *settled)
        return bool(settled)

    async def replace(self, redis_url: str, subjects: list[str], reservation: str, invocation_id: str | None) -> None:
        """The reservation becomes the invocation's id in each subject's in-flight set (dropped when nothing
        was started)."""
        pipe = self._client(redis_url).pipeline(transaction=True)
        for subject in subjects:
            key = keys.rate_inflight(subject)
            pipe.zrem(key, reservation)
            if invocation_id is not None:
                pipe.zadd(key, {invocation_id: int(time.time() * 1000)})
        await pipe.execute()

    async def aclose(self) -> None:
        """Close the Redis connections."""
        for redis in self._redis.values():
            await redis.aclose()
        self._redis.clear()
