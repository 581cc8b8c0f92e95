"""RateLimits for the API: ``worker.queues.rate_limits.RateLimits`` (the settings, ``AGENTQ_RATE_*``, and the admission
a schedule's runs go through too), whose refusal is answered as a 429 with ``Retry-After`` naming the limit."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from starlette.exceptions import HTTPException

from worker.queues import rate_limits as admission
from worker.queues.rate_limits import ENV_NAMES, INFLIGHT_RETRY_AFTER_S, RateLimitRefusedError

__all__ = ["ENV_NAMES", "INFLIGHT_RETRY_AFTER_S", "RateLimitRefusedError", "RateLimitedError", "RateLimits"]

T = TypeVar("T")


class RateLimitedError(HTTPException):
    """Raised when a principal or an app/user has used its enqueue rate or its invocations in flight (429)."""

    def __init__(self, detail: str, retry_after_s: int):
        super().__init__(429, detail, headers={"Retry-After": str(max(1, retry_after_s))})


class RateLimits(admission.RateLimits):
    """The limits (0: off); ``burst`` 0 means ``max(1, rate)``. A refusal raises RateLimitedError (429)."""

    async def admitted(self, queue: Any, principal_id: str, app: str, user: str,
                       start: Callable[[], Awaitable[T]], invocation_id: Callable[[T], str]) -> T:
        """``await start()`` if the limits admit it (RateLimitedError otherwise); the invocation it started
        (``invocation_id`` of its result) then counts as in flight until it settles."""
        try:
            return await super().admitted(queue, principal_id, app, user, start, invocation_id)
        except RateLimitRefusedError as refused:
            raise RateLimitedError(str(refused), refused.retry_after_s) from None
