"""Session leases: who may run a session's head invocation, proven by a fencing token on every write.

A run job acquires the lease only for the head of the session's FIFO queue; the lease string holds
``<invocation_id>|<fence>`` with a TTL that the holding worker heartbeats. The fence is INCRed on every
acquisition and every commit of the session service checks it, so a superseded holder cannot write.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from typing import Any, Literal

from runtime.redis_store import keys
from runtime.redis_store.scripts import (
    ACQUIRE,
    ADD_PENDING,
    CONSUME,
    HEARTBEAT,
    HEARTBEAT_MANY,
    RELEASE,
    SETTLE,
)
from runtime.tracing.otel import current_traceparent
from worker.fleet.attempts import CrashEvidence
from worker.records.codec import decode_record, dumps, encode_fields, pending_json
from worker.records.record import InvocationRecord, PendingCall
from worker.records.store import InvocationStore, Where, status_data
from worker.webhooks import due as webhooks_due

HEARTBEAT_CHUNK = 500
"""Leases extended per script call on a single Redis node (one call per lease on a cluster)."""

LEASE_TTL_S = 5.0
"""A dead worker's invocation is taken over this long after its last heartbeat (plus one reaper pass)."""

Refusal = Literal["gone", "settled", "not_head", "held"]


@dataclass(kw_only=True)
class Claim:
    """A held lease: the record as it was when acquired and the token every later write must present."""

    record: InvocationRecord
    where: Where
    token: str
    response_fields: list[str] = field(default_factory=list)
    """The ``r:<seq>`` fields of the responses waiting when the claim was made."""
    tracked: bool = False
    """True once a heartbeat put the claim in ``lease_expiries`` (and took it out of the dispatch watchdog)."""
    settling: bool = False
    """Set while the settle script runs: its own lease deletion must not read as a lost lease."""
    interrupted: bool = False
    """True when the previous holder never settled (died, or handed back): history decides what is left to do."""
    in_child: bool = False
    """True once a quarantine process runs it (worker.running.quarantine): that process heartbeats and settles it."""
    evidence: CrashEvidence = field(default_factory=CrashEvidence)
    """Earlier runs of the invocation that ended with their process gone (worker.fleet.attempts)."""
    session_read: tuple[Any, Any] | None = None
    """The session as the claim read it for the run (the history cache entry it read against, the reply), handed
    to the session service by the run (``RedisSessionService.adopt_claimed_read``)."""

    @property
    def fence(self) -> int:
        """The fencing token the session service checks on each commit."""
        return int(self.token.rsplit("|", 1)[1])


async def acquire(
    store: InvocationStore, invocation_id: str, worker: str, ttl_s: float = LEASE_TTL_S,
) -> Claim | Refusal:
    """Take the session lease for ``invocation_id`` if it is the queue head and no one holds it."""
    where = await store.locate(invocation_id)
    # The claim reads the session for the run too (its first get_session then needs no round trip).
    held, session_read = store.session_service.claimed_read_args(where.app, where.user, where.session)
    reply = await ACQUIRE(
        store.mux, record=store.record_key(invocation_id, where),
        **store.session_script_keys(where, "queue", "lease", "fence", "stream", "session_meta"),
        **session_read, invocation_id=invocation_id, worker=worker, lease_ms=int(ttl_s * 1000), now=time.time(),
        status_counts=keys.status_counts(store.shard(where)))
    if reply[0] != "ok":
        if reply[0] != "held":  # the holder (or the head's settle) is responsible for it now
            await store.mux.execute_command("ZREM", keys.dispatch_due(store.shard(where)), invocation_id)
        return reply[0]
    flat = reply[2]
    fields = {flat[i]: flat[i + 1] for i in range(0, len(flat), 2)}
    # The dispatch watchdog entry stays until the first heartbeat puts the claim in lease_expiries, so an
    # invocation whose worker dies in between is still found by a reaper.
    return Claim(
        record=decode_record(fields), where=where, token=reply[1],
        response_fields=sorted(name for name in fields if name.startswith("r:")),
        interrupted=reply[3] == "running", evidence=CrashEvidence.from_fields(fields),
        session_read=(held, reply[4]),
    )


async def heartbeat(store: InvocationStore, claims: list[Claim], ttl_s: float = LEASE_TTL_S) -> list[bool]:
    """Extend every claim's lease in one round trip; False for a claim that lost its lease."""
    if not claims:
        return []
    expiry = int((time.time() + ttl_s) * 1000)
    ttl_ms = int(ttl_s * 1000)
    if store.clients.is_cluster:
        beats = [HEARTBEAT(store.mux, lease=_lease(claim), token=claim.token, lease_ms=ttl_ms) for claim in claims]
    else:  # one script call per chunk: a worker with hundreds of invocations beats them all every second
        chunks = [claims[i : i + HEARTBEAT_CHUNK] for i in range(0, len(claims), HEARTBEAT_CHUNK)]
        beats = [HEARTBEAT_MANY(store.mux, leases=[_lease(c) for c in chunk], lease_ms=ttl_ms,
                                tokens=[c.token for c in chunk]) for chunk in chunks]
    # Claims already settling are left out by the caller: their settle removes them from lease_expiries, and
    # this ZADD is written before any later settle's ZREM (one loop, one connection, in order). On a Cluster the
    # two may cross; a stale entry then only makes a reaper re-send a settled invocation's job, which is refused.
    books = []
    for shard, shard_claims in _by_shard(store, claims).items():
        books.append(("ZADD", keys.lease_expiries(shard), *[v for c in shard_claims for v in (expiry, c.record.id)]))
        fresh = [claim.record.id for claim in shard_claims if not claim.tracked]
        if fresh:
            books.append(("ZREM", keys.dispatch_due(shard), *fresh))
    for claim in claims:  # before the ZADD is sent: a settle from here on must remove what it writes
        claim.tracked = True
    replies = await asyncio.gather(*beats, store.batch(*books))
    if store.clients.is_cluster:
        return [bool(reply) for reply in replies[: len(claims)]]
    return [bool(held) for reply in replies[: len(beats)] for held in reply]


async def is_held(store: InvocationStore, claim: Claim) -> bool:
    """True while the session lease is still this claim's (nobody cancelled, rewound or took it over)."""
    held = await store.mux.execute_command("GET", _lease(claim))
    return (held.decode() if isinstance(held, bytes) else held) == claim.token


async def add_pending(store: InvocationStore, claim: Claim, calls: list[PendingCall]) -> bool:
    """Record long-running calls as pending as soon as their event is committed (so responses are accepted)."""
    pairs: list[str] = []
    for seq, call in enumerate(calls):
        pairs += [call.id, pending_json(call, int(time.time() * 1000) * 100 + seq)]
    ok = await ADD_PENDING(store.mux, record=store.record_key(claim.record.id, claim.where), lease=_lease(claim),
                           token=claim.token, calls=pairs)
    deadlines = {f"{claim.record.id} {call.id}": call.deadline for call in calls if call.deadline}
    if ok and deadlines:  # rare: only with a park timeout
        shard = store.shard(claim.where)
        await store.redis.zadd(keys.call_deadlines(shard), deadlines, nx=True)
        # On a Cluster the reaper reads a shard only once it is due (worker.config.due_shards): marked by the
        # earliest deadline, a call is answered within a pass of it, not when the lease entry's shard comes due.
        for command in store.due_marks(shard, int(min(deadlines.values()) * 1000)):
            await store.mux.execute_command(*command)
    return bool(ok)


async def consume_responses(store: InvocationStore, claim: Claim, fields: list[str]) -> bool:
    """Drop responses that are now committed to the session."""
    if not fields:
        return True
    return bool(await CONSUME(store.mux, record=store.record_key(claim.record.id, claim.where), lease=_lease(claim),
                              token=claim.token, response_fields=fields))


SettleOutcome = Literal["ok", "continue", "lost"]


async def settle(
    store: InvocationStore, claim: Claim, status: str, detail: dict | None = None
) -> tuple[SettleOutcome, str]:
    """Move to parked/completed/failed, release the lease, pop the queue and send the next head's run job;
    returns the outcome and the next head.

    ``continue``: parking was refused because responses arrived meanwhile; the lease is still held.
    """
    claim.settling = True
    now = time.time()
    # the run's span, when traced: the run that resumes it after a park links to it (worker.running.tracing)
    values: dict = {"error": (detail or {}).get("error"), "run_span": current_traceparent()}
    if status != "parked":
        values["finished_at"] = now
    where = claim.where
    shard = store.shard(where)
    reply = await SETTLE(
        store.mux, record=store.record_key(claim.record.id, where),
        **store.session_script_keys(where, "queue", "lease", "stream", "active"),
        settled=keys.invocation_settled(where.app, where.user, claim.record.id),
        lease_expiries=keys.lease_expiries(shard), dispatch_due=keys.dispatch_due(shard),
        journal=keys.invocation_journal(where.app, where.user, claim.record.id),
        parked=keys.user_parked(where.app, where.user), webhook_due=keys.webhook_due(shard),
        webhook_outbox=keys.webhook_outbox(shard), **store.inbox_script_keys(where, shard),
        token=claim.token, invocation_id=claim.record.id, status=status, now=now,
        status_data=status_data(status, detail), **store.stream_trim,
        parked_member=dumps([where.user, claim.record.id]), lease_indexed=int(_maybe_indexed(claim)),
        fields=encode_fields(values))
    if reply[0] != "ok":
        claim.settling = reply[0] != "continue"
        return reply[0], ""
    if claim.record.webhook:  # the script queued its notification: on a Cluster, its shard is marked for delivery
        for command in webhooks_due.marks(shard, now * 1000):
            await store.mux.execute_command(*command)
    if reply[1]:
        store.remember(reply[1], where)  # the next head is in the same session: its job carries the location
        await store.dispatch_next(reply[1])
    return "ok", reply[1]


def _maybe_indexed(claim: Claim) -> bool:
    """False only when no heartbeat can have put the claim's invocation in ``lease_expiries``: this process never
    beat it, and no earlier holder (an interrupted run) or quarantine process did. Most invocations settle before
    their first heartbeat, and their settle then skips the ZREM there."""
    return claim.tracked or claim.interrupted or claim.in_child


async def hand_back(store: InvocationStore, claim: Claim, *, worker: str = "", crash_exit: str = "") -> bool:
    """Give the lease up without settling (graceful shutdown, lost connection) and re-send the run job for another
    worker; False when someone else holds the session by now (it is theirs to finish).

    ``crash_exit``: how the quarantine process running the invocation alone under ``worker`` ended; the crash is
    charged in the same step (worker.fleet.attempts)."""
    claim.settling = True  # its own lease deletion must not read as a lost lease (and cancel the rest of this)
    record_key = store.record_key(claim.record.id, claim.where)
    if not await RELEASE(store.mux, lease=_lease(claim), record=record_key, token=claim.token,
                         invocation_id=claim.record.id, worker=worker, now=time.time(), crash_exit=crash_exit):
        return False
    await store.mux.execute_command("ZREM", keys.lease_expiries(store.shard(claim.where)), claim.record.id)
    await store.dispatch_next(claim.record.id)
    return True


def _by_shard(store: InvocationStore, claims: list[Claim]) -> dict[str, list[Claim]]:
    """Claims grouped by the shard of their reaper entries (one group, '', on a single node)."""
    if not store.clients.is_cluster:
        return {"": claims}
    groups: dict[str, list[Claim]] = {}
    for claim in claims:
        groups.setdefault(store.shard(claim.where), []).append(claim)
    return groups


def _lease(claim: Claim) -> str:
    return keys.session_lease(claim.where.app, claim.where.user, claim.where.session)


