"""RateLimits: how fast a principal, and an app's user, may start invocations, and how many each may have in flight.
The admission every way of starting one goes through: the API's enqueue routes (``api.access.rate_limits``, which
answers a refusal with 429) and a schedule's ticks and triggers (``worker.schedules``).

Two subjects are limited together, each with a token bucket (``rate`` enqueues per second, up to ``burst`` at
once) and a cap on invocations in flight (queued, running or parked): the calling principal
(``Caller.principal_id``) and the app/user the invocation runs for. Both live in Redis and are checked and
taken by one Lua script (``rate/admit``), so they hold across API processes, and each subject has keys of its
own: one abusive client empties only its own bucket. A refusal (RateLimitRefusedError) names the limit and when to retry.
All limits are off by default (no Redis round trip at all); ``from_env`` reads ``AGENTQ_RATE_*``.
"""

from __future__ import annotations

import math
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from runtime.errors import RetryableError, UsageError
from worker.queues.rate_limit_store import RateLimitStore

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

INFLIGHT_RETRY_AFTER_S = 1


class RateLimitRefusedError(RetryableError):
    """Raised when a principal or an app/user has used its enqueue rate or its invocations in flight; try again
    in ``retry_after_s`` seconds (at least 1)."""

    def __init__(self, detail: str, retry_after_s: int):
        super().__init__(detail)
        self.retry_after_s = max(1, retry_after_s)


@dataclass(kw_only=True)
class RateLimits:
    """The limits (0: off); ``burst`` 0 means ``max(1, rate)``."""

    principal_rate: float = 0.0
    principal_burst: float = 0.0
    principal_inflight: int = 0
    user_rate: float = 0.0
    user_burst: float = 0.0
    user_inflight: int = 0
    _store: RateLimitStore = field(default_factory=RateLimitStore, repr=False, compare=False)

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
        """``await start()`` if the limits admit it (RateLimitRefusedError otherwise); the invocation it started
        (``invocation_id`` of its result) then counts as in flight until it settles."""
        if not self.enabled:
            return await start()
        url = queue.redis_url
        subjects = (f"p:{principal_id}", f"u:{app}/{user}")
        reservation = "r:" + uuid.uuid4().hex
        await self._admit(url, queue, subjects, reservation)
        caps = (self.principal_inflight, self.user_inflight)
        counted = [subject for subject, cap in zip(subjects, caps, strict=True) if cap]
        try:
            result = await start()
        except BaseException:
            await self._store.replace(url, counted, reservation, None)
            raise
        await self._store.replace(url, counted, reservation, invocation_id(result))
        return result

    async def _admit(self, url: str, queue: Any, subjects: tuple[str, str], reservation: str) -> None:
        principal = (self.principal_rate, _burst(self.principal_rate, self.principal_burst), self.principal_inflight)
        scope = (self.user_rate, _burst(self.user_rate, self.user_burst), self.user_inflight)
        for attempt in range(2):
            outcome, figure, which = await self._store.admit(url, subjects, reservation, principal=principal,
                                                             scope=scope)
            subject = subjects[0] if which == "principal" else subjects[1]
            if outcome == 0:
                return
            if outcome == 1:
                rate = self.principal_rate if which == "principal" else self.user_rate
                raise RateLimitRefusedError(
                    f"enqueue rate limit of {_who(which, subject)} reached ({rate:g} per second, "
                    f"{ENV_NAMES[which + '_rate']}): retry in {figure / 1000:.2f}s", math.ceil(figure / 1000))
            if attempt == 0 and await self._store.prune(url, queue, subject):
                continue  # some had settled: ask again
            cap = self.principal_inflight if which == "principal" else self.user_inflight
            raise RateLimitRefusedError(
                f"{_who(which, subject)} has {figure} invocations in flight, the limit is {cap} "
                f"({ENV_NAMES[which + '_inflight']}): wait for one to settle", INFLIGHT_RETRY_AFTER_S)

    async def aclose(self) -> None:
        """Close the Redis connections."""
        await self._store.aclose()


def _burst(rate: float, burst: float) -> float:
    return burst or max(1.0, rate)


def _who(which: str, subject: str) -> str:
    return f"principal {subject[2:]!r}" if which == "principal" else f"app/user {subject[2:]!r}"

