"""Scheduler: the clock loop that fires due ticks. Run as many as you like (``agentq scheduler``): they share
nothing but the due set (on a Redis Cluster, one per shard in use), and the fire script lets exactly one of them
enqueue each tick."""

from __future__ import annotations

import asyncio
import json
import logging
import time
from typing import TYPE_CHECKING

from runtime.redis_store import keys
from runtime.redis_store.availability import is_store_unavailable
from worker.config.shards import in_use
from worker.schedules.store import ScheduleStore

if TYPE_CHECKING:
    from worker.records.store import InvocationStore

log = logging.getLogger("agentq.scheduler")

POLL_S = 0.25
"""The longest a scheduler sleeps between looks at the due set: a new or changed schedule is seen this late at most."""

BATCH = 100
"""Due schedules taken per look."""

RETRY_FAILED_S = 60.0
"""How soon a due schedule whose firing failed (a shape this code does not read) is looked at again."""


class Scheduler:
    """Fires the ticks that are due, then sleeps until the next one (at most POLL_S)."""

    def __init__(self, store: InvocationStore, *, name: str = "scheduler"):
        self.schedules = ScheduleStore(store)
        self.store = store
        self.name = name
        self.fired = 0
        """Invocations this scheduler enqueued (ticks it lost to another scheduler are not counted)."""

    async def run(self, stop: asyncio.Event) -> None:
        """Until ``stop`` is set. A Redis error is logged and retried after a pause, never fatal: the tick it
        interrupted is fired by the next look (or another scheduler), since nothing was consumed."""
        log.info("scheduler %s started", self.name)
        try:
            while not stop.is_set():
                try:
                    wait = await self.fire_due()
                except Exception:  # noqa: BLE001 (a lost connection, a failover: keep the clock going)
                    log.exception("scheduler %s: a pass failed; retrying", self.name)
                    wait = 1.0
                try:
                    await asyncio.wait_for(stop.wait(), timeout=wait)
                except TimeoutError:
                    pass
        finally:
            await self.schedules.aclose()
        log.info("scheduler %s stopped after enqueueing %d runs", self.name, self.fired)

    async def fire_due(self) -> float:
        """One look: fire every due schedule; the seconds to sleep until the next one is due (at most POLL_S)."""
        now_ms = round(time.time() * 1000)
        shards, pages = await self._each_due_set("ZRANGEBYSCORE", "-inf", now_ms, "LIMIT", 0, BATCH)
        for shard, page in zip(shards, pages, strict=True):
            for member in page:
                invocation_id = await self._fire_one(shard, member, now_ms)
                if invocation_id is not None:
                    self.fired += 1
                    log.info("scheduler %s: schedule %s enqueued %s", self.name, member, invocation_id)
        if any(len(page) == BATCH for page in pages):
            return 0.0
        _, heads = await self._each_due_set("ZRANGE", 0, 0, "WITHSCORES")
        firsts = [float(first[1]) for first in heads if first]
        if not firsts:
            return POLL_S
        return min(POLL_S, max(0.0, (min(firsts) - time.time() * 1000) / 1000))

    async def _fire_one(self, shard: str, member: str, now_ms: int) -> str | None:
        """Fire one due schedule; the invocation it enqueued, or None. One that fails (a shape this code does
        not read) fails alone: logged and looked at again in RETRY_FAILED_S, while the others fire now."""
        try:
            app, user, schedule_id = json.loads(member)
            return await self.schedules.fire_due(app, user, schedule_id, now_ms)
        except Exception as exc:
            if is_store_unavailable(exc):
                raise  # the pass's failure, not this schedule's: run() retries it
            log.error("scheduler %s: due schedule %r failed (looked at again in %gs): %s: %s", self.name,
                      member, RETRY_FAILED_S, type(exc).__name__, exc)
            await self.store.batch(("ZADD", keys.schedules_due(shard), "XX",
                                    now_ms + int(RETRY_FAILED_S * 1000), member))
            return None

    async def _each_due_set(self, command: str, *args) -> tuple[list[str], list]:
        """``command`` on every due set: the one key on one node; each shard's in use on a Cluster (where a
        schedule's entry lives in its user's slot, beside the keys the fire script writes)."""
        shards = await in_use(self.store.redis, cluster=self.store.clients.is_cluster)
        replies = await self.store.batch(*[(command, keys.schedules_due(shard), *args) for shard in shards])
        failed = next((reply for reply in replies if isinstance(reply, Exception)), None)
        if failed is not None:
            raise failed
        return shards, replies
