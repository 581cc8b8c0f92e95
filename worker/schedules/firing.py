"""Firing a tick: the one step (``lua/schedules/fire.lua``) that consumes a schedule's tick and enqueues its
invocation together, so racing or restarted schedulers enqueue each tick once. A trigger by hand goes through it
too, consuming no tick."""

from __future__ import annotations

import random
import time
from typing import TYPE_CHECKING

from runtime.errors import SessionExistsError, UsageError
from runtime.ids import new_invocation_id
from runtime.redis_store import keys
from runtime.redis_store.replication import wait_for_replicas
from runtime.redis_store.scripts import SCHEDULE_FIRE
from worker.config.shards import register
from worker.queues.dispatch import DISPATCH_GRACE_S
from worker.records.codec import dumps, encode_record
from worker.records.inputs import run_config_dict, to_content
from worker.records.record import InvocationRecord
from worker.schedules.spec import ScheduleSpec
from worker.schedules.ticks import Step
from worker.schedules.view import Schedule

if TYPE_CHECKING:
    from worker.records.store import InvocationStore

RUNS_KEPT = 200
"""Invocation ids kept per schedule in its runs list (the records themselves follow the retention policy)."""


def due_member(app: str, user: str, schedule_id: str) -> str:
    """A schedule's member in the due set."""
    return dumps([app, user, schedule_id])


def due_ms(spec: ScheduleSpec, tick: int | None) -> int | None:
    """When a scheduler should fire ``tick``: the tick plus this tick's random jitter (None: no tick)."""
    if tick is None:
        return None
    return tick + (round(random.uniform(0, spec.jitter_s) * 1000) if spec.jitter_s else 0)


def text(value: int | None) -> str:
    """An optional ms time as a script argument ('' for None)."""
    return "" if value is None else str(value)


async def ensure_session(store: InvocationStore, app: str, user: str, session_id: str) -> bool:
    """Make the session unless it exists; True when this call made it."""
    try:
        await store.create_session(app, user, session_id)
    except SessionExistsError:
        return False
    return True


async def fire(store: InvocationStore, schedule: Schedule, *, expected_tick: int | None, move: Step,
               skip_reason: str = "", principal: str | None = None) -> str | None:
    """Consume ``expected_tick`` (None: a trigger by hand, which consumes none) as ``move`` says, enqueueing
    ``move.fire``'s run; the invocation id, or None when nothing was enqueued (another scheduler fired the tick,
    the schedule changed since it was read, the policy skips the tick, or its session is gone). ``skip_reason``
    (with no ``move.fire``): why the tick is skipped, recorded on the schedule. ``principal``: who the run is
    enqueued by (a trigger's caller; a tick's is the schedule's creator)."""
    from worker.records.store import QUEUED, Where

    app, user, spec = schedule.app_name, schedule.user_id, schedule.spec
    new_session = spec.session_id is None and move.fire is not None
    # A deterministic id: a scheduler that retries the tick, or a second one racing for it, uses the same one.
    session_id = spec.session_id or f"{schedule.id}-{move.fire}"
    created = new_session and await ensure_session(store, app, user, session_id)
    record = InvocationRecord(
        id=new_invocation_id(), app_name=app, user_id=user, session_id=session_id,
        new_message=to_content(spec.new_message), state_delta=spec.state_delta or None,
        run_config=run_config_dict(spec.run_config), park_timeout=store.retention.park_timeout_for(app),
        webhook=store.webhooks.url_for(app, None), schedule_id=schedule.id,
        enqueued_by=principal or schedule.created_by)
    where = Where(app=app, user=user, session=session_id)
    shard = store.shard(where)
    now = time.time()
    await register(store.redis, shard)
    location = dumps([app, user, session_id])
    # The script indexes the run in a hash of the user's slot (the one global index on one node). On a Cluster
    # the index entry a bare id is looked up by is in the slot of the id itself (``store.index_key``), which no
    # step of the user's slot can write: it is written first, as ``store.enqueue`` does, and the copy the script
    # makes in the user's slot is dropped after (``_index_in_id_slot``).
    script_index = keys.invocation_index(shard)
    if store.index_key(record.id) != script_index:
        await store.mux.execute_command("HSET", store.index_key(record.id), record.id, location)
    reply = await SCHEDULE_FIRE(
        store.mux, schedule=keys.schedule(app, user, schedule.id), runs=keys.schedule_runs(app, user, schedule.id),
        due=keys.schedules_due(shard), session_meta=keys.session_meta(app, user, session_id),
        record=store.record_key(record.id, where), user_invocations=keys.user_invocations(app, user),
        **store.session_script_keys(where, "queue", "stream", "active"),
        invocation_index=script_index, dispatch_due=keys.dispatch_due(shard),
        retention_due=keys.retention_due(shard), status_counts=keys.status_counts(shard),
        member=due_member(app, user, schedule.id),
        rev=str(schedule.revision), expected_tick=text(expected_tick), next_tick=text(move.next),
        next_due_ms=text(due_ms(spec, move.next)), fire_tick=text(move.fire), missed=move.missed,
        runs_kept=RUNS_KEPT, invocation_id=record.id, created_at=record.created_at, status_data=QUEUED,
        location=location, dispatch_due_ms=round((now + DISPATCH_GRACE_S) * 1000),
        retention_due_ms=round((record.created_at + store.retention.settled_s) * 1000), now_ms=round(now * 1000),
        skip_reason=skip_reason, fields=[*encode_record(record), "retention_s", repr(store.retention.settled_s)])
    await _index_in_id_slot(store, record.id, script_index, fired=reply[0] == "fired")
    if reply[0] == "fired":
        store.remember(record.id, where)
        idle = store._idle_commands(app, user, session_id)  # a run keeps its session from expiring, as an enqueue does
        if idle:
            await store.batch(*idle)
        await wait_for_replicas(store.mux, f"invocation {record.id!r}")
        await store.dispatcher.send(record.id, [app, user, session_id])  # the watchdog entry covers a lost send
        return record.id
    if created and not await _tick_ran(store, schedule, move.fire):  # the session we made would stay empty
        await store.delete_session(app, user, session_id, "its schedule fired nothing into it")
    if reply[0] == "no_session" and expected_tick is None:
        raise UsageError(f"session {session_id!r} of schedule {schedule.id!r} does not exist any more; "
                         "point the schedule at another session or at a new session per run")
    return None


async def _index_in_id_slot(store: InvocationStore, invocation_id: str, script_index: str, *, fired: bool) -> None:
    """On a Cluster, leave the run's index entry only where a bare id is looked up: drop the script's copy in the
    user's slot when it fired, or the entry written beforehand when it did not (nothing to do on one node)."""
    if store.index_key(invocation_id) == script_index:
        return
    stale = script_index if fired else store.index_key(invocation_id)
    await store.mux.execute_command("HDEL", stale, invocation_id)


async def _tick_ran(store: InvocationStore, schedule: Schedule, tick: int | None) -> bool:
    """Whether some scheduler enqueued a run for ``tick`` (its session is then in use)."""
    runs = keys.schedule_runs(schedule.app_name, schedule.user_id, schedule.id)
    return await store.mux.execute_command("ZCOUNT", runs, tick, tick) > 0
