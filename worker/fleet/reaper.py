"""Reaper passes every worker runs about once a second; whichever worker takes a due entry first acts on it.
Taking an entry pushes its score on by ``HOLD_S`` (``lua/due/claim.lua``) rather than removing it, and the entry
goes only once its step is done (``lua/due/drop.lua``), so a worker killed in between loses nothing.
On Redis Cluster each set has one shard per hash slot in use (``worker.config.shards``); a pass reads only the shards
that are due (``worker.config.due_shards``), so its cost follows what is due, not how many shards are in use.

- dead leases: a running invocation whose lease stopped being heartbeated gets its run job sent again; the next
  worker resumes it from its committed events (failover within the lease TTL plus one pass);
- lost run jobs: a job not claimed within the dispatch grace is sent again (duplicates are dropped harmlessly),
  unless its app's queue is held back by a worker (``worker.queues.backlog``): then it is only postponed;
- neither is re-sent for an invocation that cannot run: settled (a cancel drops its entries in the same step,
  lib/cancel_step.lua, but a heartbeat already under way when it was cancelled writes its lease entry again) or
  parked (its answer sends it);
- expired parked calls: a pending call past its deadline is answered with an expiry error (the invocation's
  ``queued`` status entry names the expired calls);
- the sweeper's passes (``worker.fleet.sweeper``): what retention leaves behind, and idle sessions.
"""

from __future__ import annotations

import asyncio
import logging
import time

from google.genai import types

from runtime.errors import CallNotPendingError, InvocationNotFoundError
from runtime.redis_store import keys
from runtime.redis_store.scripts import DUE_CLAIM, DUE_DROP
from runtime.statuses import FINAL
from worker.config import due_shards
from worker.fleet.sweeper import HOLD_S, sweep_once, sweep_shard
from worker.queues import backlog
from worker.records.store import InvocationStore
from worker.webhooks import due as webhooks_due

log = logging.getLogger("agentq.reaper")
BATCH = 100


_reseeder = due_shards.Reseeder()
"""This process's turn at re-seeding the due-shards index (Cluster only)."""


async def reap_once(store: InvocationStore) -> int:
    """One pass over the three sorted sets and the sweeper's (on a Cluster, of the shards that are due); the
    number of entries acted on."""
    if not store.clients.is_cluster:
        return await _reap_shard(store, "") + await sweep_once(store, [""])
    await _reseeder.maybe_reseed(store)
    now_ms = int(time.time() * 1000)
    claimed, claimed_ms = await due_shards.claim(store, now_ms)
    acted = 0
    for shard in claimed:
        try:
            acted += await _reap_shard(store, shard) + await sweep_shard(store, shard, now_ms)
        finally:  # even after a failure: its entries are still there, and the shard must be read again
            await due_shards.settle(store, shard, claimed_ms)
    return acted


async def _reap_shard(store: InvocationStore, shard: str) -> int:
    now = time.time()
    # (set, what its entries are, its step, its scores' unit: ms, or seconds for the call deadlines)
    sets = [(keys.lease_expiries(shard), "lease expiry", _resend_dead, 1000),
            (keys.dispatch_due(shard), "dispatch watchdog", _resend_overdue, 1000),
            (keys.call_deadlines(shard), "call deadline", _expire_call, 1)]

    def score(seconds: float, unit: int) -> float:
        return int(seconds * 1000) if unit == 1000 else round(seconds, 3)

    taken = await asyncio.gather(*(  # one script per set, pipelined on the store's connection
        DUE_CLAIM(store.mux, index=key, now_ms=score(now, unit), until_ms=score(now + HOLD_S, unit), limit=BATCH)
        for key, _, _, unit in sets))
    acted = 0
    drops, failed = [], []  # failed: (set, member, score to look again at)
    for (key, what, step, unit), members in zip(sets, taken, strict=True):
        finished = []
        for member in map(_text, members):
            outcome = await _isolated(step(store, member), what, member)
            if outcome is None:
                failed.append((key, member, score(now + RETRY_FAILED_S, unit)))
            elif outcome:
                finished.append(member)
        acted += len(members)
        if finished:
            drops.append(DUE_DROP(store.mux, index=key, taken_score=score(now + HOLD_S, unit), members=finished))
    await asyncio.gather(*drops)
    if failed:  # each one's entry later: its failure is its own, and it is not lost
        await store.batch(*[("ZADD", key, "XX", later, member) for key, member, later in failed])
    return acted


RETRY_FAILED_S = 60.0
"""How soon an entry whose step failed (a record of a shape this code does not expect) is looked at again."""


def _text(member) -> str:
    return member.decode() if isinstance(member, bytes) else member


async def _isolated(step, what: str, member: str) -> bool | None:
    """Run one entry's step: whether its entry is finished with (True: dropped unless scored anew meanwhile;
    False: the step scored it anew itself), or None when it failed (logged, naming the entry), so the rest of
    the batch goes on."""
    try:
        return await step
    except Exception as exc:
        log.error("reaper: the %s step of %r failed (looked at again in %gs): %s: %s", what, member, RETRY_FAILED_S,
                  type(exc).__name__, exc)
        return None


async def _resend_dead(store: InvocationStore, invocation_id: str) -> bool:
    """Its lease entry is finished with either way: a job sent again has its dispatch-watchdog entry, written
    before the send (``dispatch_next``), and its next claim's heartbeats write the lease entry anew."""
    if await _resend(store, invocation_id):
        log.warning("invocation %s: lease expired (worker gone?), sending its run job again", invocation_id)
    return True


async def _resend_overdue(store: InvocationStore, invocation_id: str) -> bool:
    """Postponed or sent again, the entry has its new score; it is finished with only when nothing was sent."""
    if await backlog.postponed(store, invocation_id):  # waiting in a queue held back on purpose, not lost
        return False
    if await _resend(store, invocation_id):
        log.info("invocation %s: run job not claimed in time, sending it again", invocation_id)
        return False
    return True


NOT_RUNNABLE = FINAL | {"parked"}
"""Statuses whose run job is never sent again: a claim would refuse it (a parked one is sent by its answer)."""


async def _resend(store: InvocationStore, invocation_id: str) -> bool:
    """Send the invocation's run job again unless it is gone or cannot run; whether it was sent."""
    try:
        where = await store.locate(invocation_id)
    except InvocationNotFoundError:
        return False
    status = await store.mux.execute_command("HGET", store.record_key(invocation_id, where), "status")
    if status is None or status in NOT_RUNNABLE:
        log.debug("invocation %s: %s, its run job is not sent again", invocation_id, status or "gone")
        return False
    await store.dispatch_next(invocation_id)
    return True


async def _expire_call(store: InvocationStore, member: str) -> bool:
    """Answer a pending call past its deadline (``member``: "<invocation id> <call id>") with its expiry (once: a
    second pass finds it answered)."""
    invocation_id, _, call_id = member.partition(" ")
    try:
        record = await store.get(invocation_id)
        call = next((c for c in record.pending_calls if c.id == call_id), None)
        # deny by default: an unanswered confirmation is rejected, never approved
        if call is not None and call.kind == "confirmation":
            answer = {"confirmed": False, "hint": f"No answer arrived for confirmation {call_id!r} before its "
                      "deadline; it expired and counts as rejected."}
        else:
            answer = {"error": f"No response arrived for long-running call {call_id!r} before its deadline; "
                      "it expired."}
        await store.respond(invocation_id, [types.FunctionResponse(id=call_id, response=answer)],
                            detail={"expired": [call_id]})
        if record.webhook and store.clients.is_cluster:  # its 'expired' notification: the shard is marked
            for command in webhooks_due.marks(store.shard(await store.locate(invocation_id)), time.time() * 1000):
                await store.mux.execute_command(*command)
        log.info("invocation %s: pending call %s expired", invocation_id, call_id)
    except (CallNotPendingError, InvocationNotFoundError):
        pass
    return True
