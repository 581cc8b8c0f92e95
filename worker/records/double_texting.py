"""Double texting: what a new message does to the invocations already live (queued, running or parked) on its
session, chosen per enqueue (LangGraph's ``multitask_strategy``).

- ``enqueue`` (the default): it queues behind them, FIFO (``InvocationStore.enqueue``'s own path).
- ``reject``: SessionBusyError (409) while one is live; otherwise it queues.
- ``interrupt``: every live one is cancelled (a running one stops before its next commit and keeps what it
  committed), then it queues.
- ``rollback``: as ``interrupt``, and the session is rewound to before the earliest cancelled invocation that
  committed anything (``worker.records.rewind``) before the new one may run. Refused (409, nothing written) when that
  rewind would also take back another invocation's events (one that completed after a still parked one).

The check and the cancels are one script call with the enqueue (``lua/invocations/enqueue_strategy.lua``), so
concurrent senders are put in one order: of many ``reject`` senders to an idle session exactly one is accepted;
each ``interrupt`` or ``rollback`` sender cancels every invocation accepted before it, so the session ends with
one live invocation, the last accepted. The script needs the live records' keys, so the caller reads the live set
first and the script refuses ('moved') when it changed meanwhile; the caller reads again and retries.
"""

from __future__ import annotations

import asyncio
import random
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, get_args

from redis.exceptions import NoScriptError

from runtime.errors import (
    ConflictError,
    SessionNotFoundError,
    UsageError,
)
from runtime.redis_store import keys
from runtime.redis_store.replication import wait_for_replicas
from runtime.redis_store.scripts import ENQUEUE_STRATEGY
from worker.queues.dispatch import DISPATCH_GRACE_S
from worker.records import audit, child_sessions, rewind
from worker.records.codec import dumps, encode_fields, encode_record
from worker.records.rewind import SessionBusyError
from worker.records.store import QUEUED, status_data
from worker.webhooks import due as webhooks_due

if TYPE_CHECKING:
    from runtime.events import Event
    from worker.records.record import InvocationRecord
    from worker.records.store import InvocationStore, Where

Strategy = Literal["enqueue", "reject", "interrupt", "rollback"]
STRATEGIES: tuple[str, ...] = get_args(Strategy)

WAIT_S = 30.0
"""How long a rollback waits for another rollback's rewind of the same session before it gives up (409)."""


class RollbackRefusedError(ConflictError):
    """Raised when a rollback would also take back the events of an invocation it does not cancel."""


def check_strategy(strategy: str) -> Strategy:
    """``strategy`` when it is one of STRATEGIES; UsageError naming the allowed values otherwise."""
    if strategy not in STRATEGIES:
        raise UsageError(f"unknown multitask strategy {strategy!r}; allowed: {', '.join(STRATEGIES)}")
    return strategy  # type: ignore[return-value]


@dataclass(frozen=True, kw_only=True)
class _Interruption:
    """What a strategy writes on each invocation it cancels: when, who (the audit entry), why."""

    at: float
    entry: audit.AuditEntry | None
    status_data: str
    fields: list[str]

    @classmethod
    def by(cls, record: InvocationRecord, strategy: Strategy, actor: dict | None) -> _Interruption:
        at = time.time()
        reason = f"interrupted by invocation {record.id} (multitaskStrategy {strategy})"
        entry = audit.entry("cancel", actor, at, reason=reason)
        detail = {"reason": reason, "interruptedBy": record.id,
                  **({"cancelledBy": audit.who(entry)} if entry is not None else {})}
        error = {"type": "InvocationCancelledError", "message": reason}
        return cls(at=at, entry=entry, status_data=status_data("cancelled", detail),
                   fields=encode_fields({"cancel_reason": reason, "error": error, "finished_at": at}))


async def enqueue(store: InvocationStore, record: InvocationRecord, where: Where, strategy: Strategy, *,
                  actor: dict | None = None) -> str:
    """Queue ``record`` under ``strategy`` (not ``enqueue``: that is the store's own path); its id.

    ``actor`` is recorded as who cancelled the invocations it interrupts. Raises SessionNotFoundError,
    SessionBusyError (``reject`` on a live session; a rollback that waited ``WAIT_S`` for another one),
    RollbackRefusedError."""
    shard = store.shard(where)
    await store.shard_registry.register(store.redis, shard)
    cut = _Interruption.by(record, strategy, actor)
    given_up = time.monotonic() + WAIT_S
    while True:
        live = [] if strategy == "reject" else await _live(store, where)
        if strategy == "rollback":
            await _check_rollback(store, where, live)
        reply = await _run(store, record.id, shard, where,
                           _script_args(store, record, where, shard, strategy, live, cut))
        if reply[0] == "ok":
            break
        if reply[0] == "missing":
            raise SessionNotFoundError(f"session {where.session!r} of user {where.user!r} in app {where.app!r} "
                                       "does not exist")
        if reply[0] == "busy":
            raise SessionBusyError(f"session {where.session!r} has invocations queued, running or parked "
                                   f"({', '.join(reply[1])}); multitaskStrategy 'reject' refuses a new one")
        if time.monotonic() > given_up:  # 'rewinding' all along (or 'moved': the live set never held still)
            raise SessionBusyError(f"session {where.session!r} did not settle for {WAIT_S}s of retries ({reply[0]})")
        # The live set moved between the read and the script, or another rollback is rewinding: read again.
        await asyncio.sleep(random.uniform(0.001, 0.01 if reply[0] == "moved" else 0.05))
    _, first_entry, token, cancelled, calls, _head = reply
    store.remember(record.id, where)
    store.remember_first_entry(record.id, first_entry)
    await _clean_up_after_cancels(store, where, shard, cut.entry, cancelled, calls)
    await wait_for_replicas(store.mux, f"invocation {record.id!r}")
    if strategy == "rollback":
        try:
            await rewind.put_back(store, where, token, lambda events: _rollback_target(events, cancelled))
        finally:
            await rewind.release(store, where, token)  # sends the new invocation's run job
    else:
        await store.dispatcher.send(record.id, [where.app, where.user, where.session])
    return record.id


def _script_args(store: InvocationStore, record: InvocationRecord, where: Where, shard: str, strategy: Strategy,
                 live: list[str], cut: _Interruption) -> dict:
    """ENQUEUE_STRATEGY's arguments, by its header's names."""
    return dict(
        session_meta=keys.session_meta(where.app, where.user, where.session),
        record=store.record_key(record.id, where), user_invocations=keys.user_invocations(where.app, where.user),
        **store.session_script_keys(where, "queue", "stream", "active", "lease", "fence"),
        parked=keys.user_parked(where.app, where.user), webhook_due=keys.webhook_due(shard),
        webhook_outbox=keys.webhook_outbox(shard), app_parked=keys.app_parked(where.app, shard),
        inbox_changes=keys.inbox_changes(shard), status_counts=keys.status_counts(shard),
        **store.reaper_script_keys(shard), live=[key for invocation_id in live for key in _live_keys(store, where, invocation_id)],
        invocation_id=record.id, created_at=record.created_at, strategy=strategy, now=cut.at, status_data=QUEUED,
        cancel_data=cut.status_data, **store.stream_trim,
        audit=audit.script_args(cut.entry, where.user, record.id)["audit"], hold_ms=int(rewind.HOLD_S * 1000),
        live_ids=[len(live), *[value for invocation_id in live for value in (
            invocation_id, audit.script_args(None, where.user, invocation_id)["audit_member"])]],
        cancel_fields=[len(cut.fields) // 2, *cut.fields],
        fields=[*encode_record(record), "retention_s", repr(store.retention.settled_s)])


async def _run(store: InvocationStore, invocation_id: str, shard: str, where: Where, args: dict) -> list:
    """The script call, batched with the invocation's index entry, dispatch watchdog and retention entries as
    ``InvocationStore.enqueue`` writes them (taken back when the script refuses)."""
    replies = await store.batch(
        ("HSET", store.index_key(invocation_id), invocation_id, dumps([where.app, where.user, where.session])),
        ENQUEUE_STRATEGY.command(**args),
        ("ZADD", keys.dispatch_due(shard), int((time.time() + DISPATCH_GRACE_S) * 1000), invocation_id),
        ("ZADD", keys.retention_due(shard), int((args["created_at"] + store.retention.settled_s) * 1000), invocation_id),
        *store.idle_commands(where.app, where.user, where.session),
        *store.due_marks(shard, int((time.time() + DISPATCH_GRACE_S) * 1000)),  # for the reaper, on a Cluster
    )
    reply = replies[1]
    if isinstance(reply, NoScriptError):  # a server restart emptied the script cache
        reply = await ENQUEUE_STRATEGY(store.mux, **args)
    failed = next((r for r in replies if isinstance(r, Exception) and not isinstance(r, NoScriptError)), None)
    if failed is not None or reply[0] != "ok":
        await store.batch(("HDEL", store.index_key(invocation_id), invocation_id),
                          ("ZREM", keys.dispatch_due(shard), invocation_id),
                          ("ZREM", keys.retention_due(shard), invocation_id))
        if failed is not None:
            raise failed
    return reply


async def _live(store: InvocationStore, where: Where) -> list[str]:
    """The ids of the session's live invocations (its ``active`` set)."""
    active = store.session_script_keys(where, "active")["active"]
    return list(await store.mux.execute_command("ZRANGE", active, 0, -1))


def _live_keys(store: InvocationStore, where: Where, invocation_id: str) -> tuple[str, str, str]:
    """A live invocation's record, settled stream and journal: the keys its cancel writes."""
    return (store.record_key(invocation_id, where), keys.invocation_settled(where.app, where.user, invocation_id),
            keys.invocation_journal(where.app, where.user, invocation_id))


async def _clean_up_after_cancels(store: InvocationStore, where: Where, shard: str, entry: audit.AuditEntry | None,
                                  cancelled: list[str], calls: list[str]) -> None:
    """What ``InvocationStore.cancel`` does after its script, for each invocation the strategy cancelled: the
    app's audit index, the AgentTool child sessions (the reaper's and deadline entries went in the script)."""
    if not cancelled:
        return
    # any of them may have queued a notification: on a Cluster, the shard is marked for delivery
    commands: list[tuple] = webhooks_due.marks(shard, time.time() * 1000)
    if entry is not None:
        at = int(entry.at * 1000)
        commands += [("ZADD", keys.app_audit(where.app), "NX", at,
                      audit.script_args(entry, where.user, invocation_id)["audit_member"]) for invocation_id in cancelled]
    if commands:
        await store.batch(*commands)
    for invocation_id in cancelled:
        await child_sessions.delete_children(store, where.app, where.user, where.session, invocation_id)


async def _check_rollback(store: InvocationStore, where: Where, live: list[str]) -> None:
    """RollbackRefusedError when rewinding to before the live invocations would take back anyone else's events."""
    session = await store.session_service.get_session(app_name=where.app, user_id=where.user,
                                                      session_id=where.session)
    if session is None:
        return  # the script says the session is missing
    target = _rollback_target(session.events, live)
    if target is None:
        return
    start = next(index for index, event in enumerate(session.events) if event.invocation_id == target)
    others = list(dict.fromkeys(event.invocation_id for event in session.events[start:]
                                if event.invocation_id not in live))
    if others:
        raise RollbackRefusedError(
            f"rolling back session {where.session!r} to before invocation {target!r} would also take back the "
            f"events of {', '.join(map(repr, others))}, which it does not cancel; nothing was changed "
            "(use multitaskStrategy 'interrupt', or rewind the session yourself)")


def _rollback_target(events: list[Event], invocation_ids: list[str]) -> str | None:
    """The invocation of ``invocation_ids`` whose first event comes first in ``events`` (None: none has one)."""
    wanted = set(invocation_ids)
    return next((event.invocation_id for event in events if event.invocation_id in wanted), None)
