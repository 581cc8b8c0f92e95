"""RedisSpanStore: one JSON array per finished run in a list per session, expiring like settled invocations."""

from __future__ import annotations

import json
from typing import Any

from ..redis_store import keys
from ..redis_store.connection import LoopClients
from .store import MAX_RUNS_PER_SESSION, BaseSpanStore

TRIM_SLACK = max(1, MAX_RUNS_PER_SESSION // 10)
"""Runs a session's list may hold beyond ``MAX_RUNS_PER_SESSION`` before a save trims it back (reads show the
newest ``MAX_RUNS_PER_SESSION`` only), so the trim is one LTRIM per ``TRIM_SLACK`` saves, not one per save."""


class RedisSpanStore(BaseSpanStore):
    """``save`` is one round trip (RPUSH, PEXPIRE), plus an LTRIM once the list has ``TRIM_SLACK`` runs more
    than a read shows; the list expires ``ttl_s`` after the last run saved, the retention of a settled
    invocation's record (``RetentionPolicy.settled_s``), and goes with the session."""

    def __init__(self, url: str | None = None, *, client=None, ttl_s: float = 7 * 24 * 3600.0):
        self._clients = LoopClients(url, client)
        self._ttl_ms = max(1, int(ttl_s * 1000))

    async def aclose(self) -> None:
        """Close the connection pool this store opened for the running loop."""
        await self._clients.aclose()

    async def save(self, *, app_name, user_id, session_id, spans) -> None:
        key = keys.session_spans(app_name, user_id, session_id)
        client = self._clients.get()
        async with client.pipeline(transaction=False) as pipe:
            pipe.rpush(key, json.dumps(spans, separators=(",", ":")))
            pipe.pexpire(key, self._ttl_ms)
            length, _ = await pipe.execute()
        if length > MAX_RUNS_PER_SESSION + TRIM_SLACK:
            await client.ltrim(key, -MAX_RUNS_PER_SESSION, -1)

    async def list(self, *, app_name, user_id, session_id) -> list[dict[str, Any]]:
        runs = await self._clients.get().lrange(keys.session_spans(app_name, user_id, session_id),
                                                -MAX_RUNS_PER_SESSION, -1)
        return [span for run in runs for span in json.loads(run)]
