"""Scheduler: the clock loop that fires due ticks. Run as many as you like (``agentq scheduler``): they share
nothing but the due set, and the fire script lets exactly one of them enqueue each tick."""

from __future__ import annotations

import asyncio
import json
import logging
import time
from typing import TYPE_CHECKING

from runtime.redis_store import keys
from runtime.redis_store.availability import is_store_unavailable
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
        """One look: fire every due schedule; the seconds to sleep until the next due one (at most POLL_S)."""
        now_ms = round(time.time() * 1000)
        due = await self.store.mux.execute_command("ZRANGEBYSCORE", keys.schedules_due(), "-inf", now_ms,
                                                   "LIMIT", 0, BATCH)
        for member in due:
            try:
                app, user, schedule_id = json.loads(member)
                invocation_id = await self.schedules.fire_due(app, user, schedule_id, now_ms)
            except Exception as exc:
                if is_store_unavailable(exc):
                    raise  # the pass's failure, not this schedule's: run() retries it
                # a schedule of a shape this code does not read fails alone: looked at later, the others fire now
                log.error("scheduler %s: due schedule %r failed (looked at again in %gs): %s: %s", self.name,
                          member, RETRY_FAILED_S, type(exc).__name__, exc)
                await self.store.mux.execute_command("ZADD", keys.schedules_due(), "XX",
                                                     now_ms + int(RETRY_FAILED_S * 1000), member)
                continue
            if invocation_id is not None:
                self.fired += 1
                log.info("scheduler %s: schedule %s enqueued %s", self.name, schedule_id, invocation_id)
        if len(due) == BATCH:
            return 0.0
        upcoming = await self.store.mux.execute_command("ZRANGE", keys.schedules_due(), 0, 0, "WITHSCORES")
        if not upcoming:
            return POLL_S
        return min(POLL_S, max(0.0, (float(upcoming[1]) - time.time() * 1000) / 1000))
