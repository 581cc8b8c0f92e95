"""RateLimits: how fast a principal, and an app's user, may start invocations, and how many each may have in flight.

Two subjects are limited together, each with a token bucket (``rate`` enqueues per second, up to ``burst`` at
once) and a cap on invocations in flight (queued, running or parked): the calling principal
(``Caller.principal_id``) and the app/user the invocation runs for. Both live in Redis and are checked and
taken by one Lua script (``rate/admit``), so they hold across API processes, and each subject has keys of its
own: one abusive client empties only its own bucket. A refusal is a 429 with ``Retry-After`` naming the limit.
All limits are off by default (no Redis round trip at all); ``from_env`` reads ``AGENTQ_RATE_*``.
"""

from __future__ import annotations

import asyncio
import math
import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from starlette.exceptions import HTTPException

from runtime.errors import InvocationNotFoundError, UsageError
from runtime.redis_store import keys
from runtime.redis_store.scripts import RATE_ADMIT

T = TypeVar("T")

ENV_NAMES = {
    "principal_rate": "AGENTQ_RATE_PRINCIPAL_PER_S",
    "principal_burst": "AGENTQ_RATE_PRINCIPAL_BURST",
    "principal_inflight": "AGENTQ_RATE_PRINCIPAL_INFLIGHT",
    "user_rate": "AGENTQ_RATE_USER_PER_S",
    "user_burst": "AGENTQ_RATE_USER_BURST",
    "user_inflight": "AGENTQ_RATE_USER_INFLIGHT",
}
"""The environment variable behind each limit (0 or unset: that limit is off)."""

IN_FLIGHT = ("queued", "running", "parked")
INFLIGHT_RETRY_AFTER_S = 1
RESERVATION_TTL_MS = 60_000  # a reservation whose enqueue never finished (the API died) stops counting then
INFLIGHT_TTL_MS = 7 * 24 * 3600 * 1000  # an idle subject's set is dropped after a week without enqueues


class RateLimitedError(HTTPException):
    """Raised when a principal or an app/user has used its enqueue rate or its invocations in flight (429)."""

    def __init__(self, detail: str, retry_after_s: int):
        super().__init__(429, detail, headers={"Retry-After": str(max(1, retry_after_s))})


@dataclass(kw_only=True)
class RateLimits:
    """The limits (0: off); ``burst`` 0 means ``max(1, rate)``."""

    principal_rate: float = 0.0
    principal_burst: float = 0.0
    principal_inflight: int = 0
    user_rate: float = 0.0
    user_burst: float = 0.0
    user_inflight: int = 0
    _redis: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    def __post_init__(self) -> None:
        for name, variable in ENV_NAMES.items():
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int | float) or value < 0 or math.isinf(value):
                raise UsageError(f"{variable} ({name}) must be a number of at least 0, got {value!r}")

    @property
    def enabled(self) -> bool:
        """True when any limit is on."""
        return any(getattr(self, name) for name in ENV_NAMES)

    @classmethod
    def from_env(cls, environ: dict[str, str] | None = None) -> RateLimits:
        """The limits from ``AGENTQ_RATE_*`` (numbers; unset or 0: off)."""
        import os

        env = os.environ if environ is None else environ
        values: dict[str, float] = {}
        for name, variable in ENV_NAMES.items():
            raw = env.get(variable, "").strip()
            if raw:
                try:
                    values[name] = int(raw) if name.endswith("inflight") else float(raw)
                except ValueError:
                    raise UsageError(f"{variable} must be a number of at least 0, got {raw!r}") from None
        return cls(**values)

    async def admitted(self, queue: Any, principal_id: str, app: str, user: str,
                       start: Callable[[], Awaitable[T]], invocation_id: Callable[[T], str]) -> T:
        """``await start()`` if the limits admit it (RateLimitedError otherwise); the invocation it started
        (``invocation_id`` of its result) then counts as in flight until it settles."""
        if not self.enabled:
            return await start()
        redis = self._client(queue.redis_url)
        subjects = (f"p:{principal_id}", f"u:{app}/{user}")
        reservation = "r:" + uuid.uuid4().hex
        await self._admit(redis, queue, subjects, reservation)
        caps = (self.principal_inflight, self.user_inflight)
        inflight = [keys.rate_inflight(s) for s, cap in zip(subjects, caps, strict=True) if cap]
        try:
            result = await start()
        except BaseException:
            await _replace(redis, inflight, reservation, None)
            raise
        await _replace(redis, inflight, reservation, invocation_id(result))
        return result

    async def _admit(self, redis: Any, queue: Any, subjects: tuple[str, str], reservation: str) -> None:
        for attempt in range(2):
            reply = await RATE_ADMIT(
                redis, principal_bucket=keys.rate_bucket(subjects[0]), principal_inflight=keys.rate_inflight(
                    subjects[0]), scope_bucket=keys.rate_bucket(subjects[1]),
                scope_inflight=keys.rate_inflight(subjects[1]), now_ms=int(time.time() * 1000),
                principal_rate=self.principal_rate, principal_burst=_burst(self.principal_rate, self.principal_burst),
                principal_inflight_max=self.principal_inflight, scope_rate=self.user_rate,
                scope_burst=_burst(self.user_rate, self.user_burst), scope_inflight_max=self.user_inflight,
                reservation=reservation, reservation_ttl_ms=RESERVATION_TTL_MS, inflight_ttl_ms=INFLIGHT_TTL_MS)
            outcome, figure = int(reply[0]), int(reply[1]) if len(reply) > 1 else 0
            which = _text(reply[2]) if len(reply) > 2 else ""
            subject = subjects[0] if which == "principal" else subjects[1]
            if outcome == 0:
                return
            if outcome == 1:
                rate = self.principal_rate if which == "principal" else self.user_rate
                raise RateLimitedError(
                    f"enqueue rate limit of {_who(which, subject)} reached ({rate:g} per second, "
                    f"{ENV_NAMES[which + '_rate']}): retry in {figure / 1000:.2f}s", math.ceil(figure / 1000))
            if attempt == 0 and await _prune(redis, queue, keys.rate_inflight(subject)):
                continue  # some had settled: ask again
            cap = self.principal_inflight if which == "principal" else self.user_inflight
            raise RateLimitedError(
                f"{_who(which, subject)} has {figure} invocations in flight, the limit is {cap} "
                f"({ENV_NAMES[which + '_inflight']}): wait for one to settle", INFLIGHT_RETRY_AFTER_S)

    def _client(self, redis_url: str) -> Any:
        if redis_url not in self._redis:  # created on first use, on the loop that uses it
            from runtime.redis_store.redis_url import redis_client_from_url

            self._redis[redis_url] = redis_client_from_url(redis_url)
        return self._redis[redis_url]

    async def aclose(self) -> None:
        """Close the Redis connections."""
        for redis in self._redis.values():
            await redis.aclose()
        self._redis.clear()


async def _prune(redis: Any, queue: Any, inflight: str) -> bool:
    """Drop the invocations of ``inflight`` that settled (or are gone); True when any was dropped."""
    ids = [m for m in (_text(raw) for raw in await redis.zrange(inflight, 0, -1)) if not m.startswith("r:")]
    records = await asyncio.gather(*(queue.get(i) for i in ids), return_exceptions=True)
    settled = [i for i, record in zip(ids, records, strict=True)
               if isinstance(record, InvocationNotFoundError) or (
                   not isinstance(record, BaseException) and record.status not in IN_FLIGHT)]
    if settled:
        await redis.zrem(inflight, *settled)
    return bool(settled)


async def _replace(redis: Any, inflight: list[str], reservation: str, invocation_id: str | None) -> None:
    """The reservation becomes the invocation's id (or is dropped when nothing was started)."""
    pipe = redis.pipeline(transaction=True)
    for key in inflight:
        pipe.zrem(key, reservation)
        if invocation_id is not None:
            pipe.zadd(key, {invocation_id: int(time.time() * 1000)})
    await pipe.execute()


def _burst(rate: float, burst: float) -> float:
    return burst or max(1.0, rate)


def _who(which: str, subject: str) -> str:
    return f"principal {subject[2:]!r}" if which == "principal" else f"app/user {subject[2:]!r}"


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)
