"""The store's errors, for callers that map errors to answers (the HTTP API: 503 with ``Retry-After`` for a store
that is away for now) without naming the Redis client they come from."""

from __future__ import annotations

from redis.exceptions import RedisError as StoreError

from runtime.redis_store.availability import is_store_unavailable

__all__ = ["StoreError", "is_store_unavailable"]
