"""Riding out Redis trouble: a dropped connection, a restart or a failover is retried, never recorded as a failure.

Every Redis client reconnects on its next command (redis-py's pools, ``runtime.redis_store.mux``). What a worker
must add is what to do with the work a lost command interrupted:
- a run whose command failed is handed back (the lease released, the run job sent again) once Redis answers: the
  next claim resumes it from its committed events, as after a crash, but without counting a cut-off run
  (``worker.fleet.attempts``);
- a settle is retried: if the lost attempt went through, the retry finds the lease gone and the record already
  settled, and then sends the next head's run job that the lost reply would have named;
- the background steps (heartbeats, reaper) back off while Redis is away; the process logs one line when it goes
  away and one when it is back (``Reachability``).
"""

from __future__ import annotations

import asyncio
import logging
import time

from runtime.redis_store import keys
from runtime.redis_store.availability import Backoff, is_store_unavailable
from runtime.redis_store.replication import wait_for_replicas
from worker.fleet import lease
from worker.fleet.lease import Claim, SettleOutcome
from worker.records.store import InvocationStore

log = logging.getLogger("agentq.worker")

HAND_BACK_FOR_S = 300.0
"""How long a run waits for Redis to hand its invocation back; later the reaper resumes it (counted as cut off)."""


async def hand_back_when_reachable(store: InvocationStore, claim: Claim, cause: BaseException) -> None:
    """Hand the invocation back after ``cause`` (a lost Redis command), retrying with backoff until Redis answers."""
    log.warning("invocation %s: Redis command failed (%s: %s); handing it back once Redis answers",
                claim.record.id, type(cause).__name__, cause)
    backoff = Backoff()
    deadline = time.monotonic() + HAND_BACK_FOR_S
    while True:
        try:
            released = await lease.hand_back(store, claim)
        except Exception as exc:
            if not is_store_unavailable(exc) or time.monotonic() > deadline:
                log.warning("invocation %s: not handed back (%s); the reaper will resume it", claim.record.id, exc)
                return
            await asyncio.sleep(backoff.next_delay())
            continue
        log.info("invocation %s: %s", claim.record.id,
                 "handed back after a lost Redis command" if released else "taken over meanwhile by another worker")
        return


async def settle(store: InvocationStore, claim: Claim, status: str, detail: dict | None) -> tuple[SettleOutcome, str]:
    """``lease.settle``, retried with backoff while Redis is away (see the module docstring)."""
    backoff = Backoff()
    deadline = time.monotonic() + HAND_BACK_FOR_S
    retried = False
    while True:
        try:
            outcome, next_head = await lease.settle(store, claim, status, detail)
        except Exception as exc:
            if not is_store_unavailable(exc) or time.monotonic() > deadline:
                raise
            log.warning("invocation %s: settling as %s failed (%s: %s), trying again", claim.record.id, status,
                        type(exc).__name__, exc)
            retried = True
            await asyncio.sleep(backoff.next_delay())
            continue
        if outcome == "lost" and retried and await _settled_as(store, claim, status):
            outcome, next_head = "ok", await _dispatch_head(store, claim)
        if outcome == "ok":
            await wait_for_replicas(store.mux, f"invocation {claim.record.id!r} {status}",
                                    key=store.record_key(claim.record.id, claim.where))
        return outcome, next_head


async def _settled_as(store: InvocationStore, claim: Claim, status: str) -> bool:
    record_key = store.record_key(claim.record.id, claim.where)
    return await store.mux.execute_command("HGET", record_key, "status") == status


async def _dispatch_head(store: InvocationStore, claim: Claim) -> str:
    where = claim.where
    head = await store.mux.execute_command("LINDEX", keys.session_queue(where.app, where.user, where.session), 0)
    if head:  # a duplicate run job, if the lost settle's own got out, is dropped harmlessly
        store.remember(head, where)
        await store.dispatch_next(head)
    return head or ""


class Reachability:
    """Logs one line when Redis stops answering a process's background steps and one when every step that
    failed got through again, however many steps share it (a worker has several: heartbeats, reaper, ...)."""

    def __init__(self, what: str):
        self.what = what
        self._failing: set[str] = set()
        self._since = 0.0

    def failed(self, step: str, exc: BaseException) -> None:
        """Note a failed step (the first failure while all was well is logged)."""
        if not self._failing:
            self._since = time.monotonic()
            log.warning("%s: Redis unreachable (%s: %s); reconnecting with backoff", self.what,
                        type(exc).__name__, exc)
        self._failing.add(step)

    def succeeded(self, step: str) -> None:
        """Note a step that went through. A step that had not failed says nothing (it may not touch Redis)."""
        if step not in self._failing:
            return
        self._failing.discard(step)
        if not self._failing:
            log.warning("%s: Redis reachable again after %.1fs", self.what, time.monotonic() - self._since)
