"""ScheduleStore: schedules in Redis (made, read, changed, paused, resumed, deleted, triggered) and what a
scheduler does with a due one; the step that fires a tick is ``firing``'s.

A run a schedule starts (a tick or a trigger) is admitted by the enqueue rate limits and in-flight quotas of
its app's user, as any enqueue is (``worker.queues.rate_limits``, ``AGENTQ_RATE_*``); the principal is the schedule
(``schedule:<id>``). A tick they refuse is skipped, and the schedule keeps the count and the last reason
(``skipped``, ``lastSkipReason``); a trigger they refuse raises RateLimitRefusedError (429 over HTTP)."""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from runtime.errors import (
    ConflictError,
    InvocationNotFoundError,
    NotFoundError,
    UsageError,
)
from runtime.ids import uuid4_str
from runtime.redis_store import keys
from runtime.redis_store.scripts import SCHEDULE_DELETE, SCHEDULE_SAVE
from worker.config.shards import shard_of
from worker.queues.rate_limits import RateLimitRefusedError, RateLimits
from worker.records.inputs import run_config_dict, to_content
from worker.records.record import InvocationRecord
from worker.schedules.firing import due_member, due_ms, ensure_session, fire, text
from worker.schedules.spec import ScheduleSpec
from worker.schedules.ticks import Step, next_tick, step
from worker.schedules.view import Schedule

if TYPE_CHECKING:
    from worker.records.store import InvocationStore

log = logging.getLogger("agentq.scheduler")

SAVE_ATTEMPTS = 5
"""Read-change-write retries when another writer changed the schedule in between."""


class ScheduleNotFoundError(NotFoundError):
    """Raised when a schedule id does not exist for that app and user."""


class ScheduleStore:
    """Schedules on the invocation store's Redis; the invocations they enqueue are ordinary records."""

    def __init__(self, store: InvocationStore, limits: RateLimits | None = None):
        """``limits``: the enqueue admission of the runs (default: from ``AGENTQ_RATE_*``)."""
        self.store = store
        self.limits = RateLimits.from_env() if limits is None else limits

    async def aclose(self) -> None:
        """Close the rate limits' Redis connections (the invocation store is its owner's to close)."""
        await self.limits.aclose()

    async def _admitted(self, schedule: Schedule, fire_run: Callable[[], Awaitable[str | None]]) -> str | None:
        """``fire_run()`` once the rate limits of the schedule's user admit a run; RateLimitRefusedError."""
        return await self.limits.admitted(self.store, f"schedule:{schedule.id}", schedule.app_name,
                                          schedule.user_id, fire_run, invocation_id=lambda fired: fired)

    def _due(self, app: str, user: str) -> str:
        """The due set holding the user's schedules: the one key on one node, the user's shard's on a Cluster."""
        return keys.schedules_due(shard_of(app, user, cluster=self.store.clients.is_cluster))

    async def _list_shard(self, app: str, user: str) -> None:
        """List the user's shard before a schedule enters its due set, so the schedulers look there."""
        await self.store.shard_registry.register(self.store.redis, shard_of(app, user,
                                                                            cluster=self.store.clients.is_cluster))

    # --- making and reading ---

    async def create(self, app: str, user: str, spec: ScheduleSpec | dict[str, Any], *,
                     schedule_id: str | None = None, created_by: str | None = None) -> Schedule:
        """Store a schedule (checked first: a bad one stores nothing); ConflictError when ``schedule_id`` is taken.
        ``created_by``: the principal making it, recorded as the enqueuer of its ticks' runs."""
        spec = ScheduleSpec.parse(spec)
        to_content(spec.new_message)  # InvalidMessageError now, not at its first tick
        run_config_dict(spec.run_config)
        schedule_id = schedule_id or "sch-" + uuid4_str()
        if not 0 < len(schedule_id) <= 128:
            raise UsageError(f"schedule id {schedule_id!r} must be 1 to 128 characters")
        await self._list_shard(app, user)
        if spec.session_id is not None:
            await ensure_session(self.store, app, user, spec.session_id)
        now_ms = _now_ms()
        first = next_tick(spec, now_ms, now_ms)
        fields = {"spec": _spec_json(spec), "paused": "0", "next_tick": text(first), "created_ms": str(now_ms),
                  "runs": "0", "missed": "0"}
        if created_by:
            fields["created_by"] = created_by
        rev = await self._save(app, user, schedule_id, "create", fields, due_ms(spec, first), created_ms=now_ms)
        if rev == 0:
            raise ConflictError(f"schedule {schedule_id!r} of user {user!r} in app {app!r} exists already")
        return await self.get(app, user, schedule_id)

    async def get(self, app: str, user: str, schedule_id: str) -> Schedule:
        """The schedule; ScheduleNotFoundError when there is none."""
        fields = await self._fields(app, user, schedule_id)
        return Schedule.from_fields(app, user, schedule_id, fields)

    async def list(self, app: str, user: str, *, page_size: int = 100,
                   page_token: str | None = None) -> tuple[list[Schedule], str | None]:
        """A page of a user's schedules in an app, oldest first, and the token of the next page (None: last)."""
        from worker.records.listing import check_page_size

        page_size = check_page_size(page_size)
        offset = _offset(page_token)
        ids = await self.store.mux.execute_command("ZRANGE", keys.user_schedules(app, user), offset,
                                                   offset + page_size)
        found = await self.store.batch(*[("HGETALL", keys.schedule(app, user, sid)) for sid in ids[:page_size]])
        schedules = [Schedule.from_fields(app, user, sid, _pairs(flat))
                     for sid, flat in zip(ids, found, strict=False) if flat and not isinstance(flat, Exception)]
        return schedules, (str(offset + page_size) if len(ids) > page_size else None)

    async def runs(self, app: str, user: str, schedule_id: str, *, limit: int = 20) -> list[InvocationRecord]:
        """The schedule's newest runs (ticks and triggers), newest first; records past retention are left out."""
        await self._fields(app, user, schedule_id)
        ids = await self.store.mux.execute_command("ZREVRANGE", keys.schedule_runs(app, user, schedule_id), 0,
                                                   limit - 1)
        records = []
        for invocation_id in ids:
            try:
                records.append(await self.store.get(invocation_id))
            except InvocationNotFoundError:
                continue
        return records

    # --- changing ---

    async def update(self, app: str, user: str, schedule_id: str, changes: dict[str, Any]) -> Schedule:
        """Change spec fields (None removes one); the next tick is worked out again from now. A bad result
        stores nothing."""
        for _ in range(SAVE_ATTEMPTS):
            current = await self.get(app, user, schedule_id)
            spec = current.spec.changed(changes)
            to_content(spec.new_message)
            if spec.session_id is not None and spec.session_id != current.spec.session_id:
                await ensure_session(self.store, app, user, spec.session_id)
            now_ms = _now_ms()
            upcoming = next_tick(spec, now_ms, round(current.created_at * 1000))
            due = None if current.paused else due_ms(spec, upcoming)
            fields = {"spec": _spec_json(spec), "next_tick": text(upcoming)}
            rev = await self._save(app, user, schedule_id, "update", fields, due, expected_rev=current.revision)
            if rev > 0:
                return await self.get(app, user, schedule_id)
            if rev == 0:
                break
        else:
            raise ConflictError(f"schedule {schedule_id!r} kept changing; try again")
        raise ScheduleNotFoundError(f"schedule {schedule_id!r} of user {user!r} in app {app!r} does not exist")

    async def pause(self, app: str, user: str, schedule_id: str) -> Schedule:
        """Stop firing ticks until resumed (a run triggered by hand still works)."""
        rev = await self._save(app, user, schedule_id, "update", {"paused": "1"}, None)
        if rev == 0:
            raise ScheduleNotFoundError(f"schedule {schedule_id!r} of user {user!r} in app {app!r} does not exist")
        return await self.get(app, user, schedule_id)

    async def resume(self, app: str, user: str, schedule_id: str) -> Schedule:
        """Fire ticks again from the next one after now: ticks that fell while paused never run."""
        for _ in range(SAVE_ATTEMPTS):
            current = await self.get(app, user, schedule_id)
            upcoming = next_tick(current.spec, _now_ms(), round(current.created_at * 1000))
            rev = await self._save(app, user, schedule_id, "update", {"paused": "0", "next_tick": text(upcoming)},
                                   due_ms(current.spec, upcoming), expected_rev=current.revision)
            if rev > 0:
                return await self.get(app, user, schedule_id)
            if rev == 0:
                break
        else:
            raise ConflictError(f"schedule {schedule_id!r} kept changing; try again")
        raise ScheduleNotFoundError(f"schedule {schedule_id!r} of user {user!r} in app {app!r} does not exist")

    async def delete(self, app: str, user: str, schedule_id: str) -> None:
        """Delete the schedule (its runs stay, as invocations, until their retention ends)."""
        existed = await SCHEDULE_DELETE(
            self.store.mux, schedule=keys.schedule(app, user, schedule_id),
            runs=keys.schedule_runs(app, user, schedule_id), user_schedules=keys.user_schedules(app, user),
            due=self._due(app, user), schedule_id=schedule_id, member=due_member(app, user, schedule_id))
        if not existed:
            raise ScheduleNotFoundError(f"schedule {schedule_id!r} of user {user!r} in app {app!r} does not exist")

    # --- firing ---

    async def trigger(self, app: str, user: str, schedule_id: str, *, admit: bool = True,
                      principal: str | None = None) -> str:
        """Enqueue a run now, apart from the ticks (paused or not); its invocation id. ``admit=False``: the
        caller already applied the rate limits (``api.doors.trigger_schedule`` applies the triggering caller's),
        so the schedule's own admission would count the same run twice. ``principal``: who triggers it, recorded
        as the run's enqueuer (default: the schedule's creator)."""

        async def fire_run() -> str | None:
            for _ in range(SAVE_ATTEMPTS):
                current = await self.get(app, user, schedule_id)
                fired = await fire(self.store, current, expected_tick=None,
                                   move=Step(fire=_now_ms(), missed=0, next=None), principal=principal)
                if fired is not None:
                    return fired
            return None

        current = await self.get(app, user, schedule_id)
        fired = await (self._admitted(current, fire_run) if admit else fire_run())
        if fired is None:
            raise ConflictError(f"schedule {schedule_id!r} kept changing; try again")
        return fired

    async def fire_due(self, app: str, user: str, schedule_id: str, now_ms: int) -> str | None:
        """What a scheduler does with a schedule found due: fire its tick (or step over it, by the policy).
        The invocation id enqueued; None when nothing was (another scheduler fired it, or the policy skips)."""
        try:
            current = await self.get(app, user, schedule_id)
        except ScheduleNotFoundError:  # deleted since the due set was read (delete.lua removes its entry)
            return None
        if current.paused or current.next_run_at is None:
            return None
        due_tick = round(current.next_run_at * 1000)
        move = step(current.spec, due_tick, now_ms, round(current.created_at * 1000))
        if move.fire is None:  # the policy skips it: nothing to admit
            return await fire(self.store, current, expected_tick=due_tick, move=move)
        try:
            return await self._admitted(current, lambda: fire(self.store, current, expected_tick=due_tick, move=move))
        except RateLimitRefusedError as refused:
            # Consumed, not retried: a tick stands for its own time, and the next one is on its way.
            skipped = await fire(self.store, current, expected_tick=due_tick, skip_reason=str(refused),
                                 move=Step(fire=None, missed=move.missed, next=move.next))
            log.warning("schedule %s of user %r in app %r: tick skipped: %s", schedule_id, user, app, refused)
            return skipped

    # --- helpers ---

    async def _fields(self, app: str, user: str, schedule_id: str) -> dict[str, str]:
        fields = _pairs(await self.store.mux.execute_command("HGETALL", keys.schedule(app, user, schedule_id)))
        if "spec" not in fields:
            raise ScheduleNotFoundError(f"schedule {schedule_id!r} of user {user!r} in app {app!r} does not exist")
        return fields

    async def _save(self, app: str, user: str, schedule_id: str, mode: str, fields: dict[str, str],
                    due_ms: int | None, *, expected_rev: int | None = None, created_ms: int = 0) -> int:
        flat = [item for pair in fields.items() for item in pair]
        return await SCHEDULE_SAVE(
            self.store.mux, schedule=keys.schedule(app, user, schedule_id), user_schedules=keys.user_schedules(app, user),
            due=self._due(app, user), schedule_id=schedule_id, member=due_member(app, user, schedule_id),
            creating="1" if mode == "create" else "0",
            expected_rev=text(expected_rev), created_ms=created_ms, due_ms=text(due_ms), fields=flat)


def _spec_json(spec: ScheduleSpec) -> str:
    return json.dumps(spec.model_dump(mode="json", by_alias=True, exclude_none=True), separators=(",", ":"))


def _now_ms() -> int:
    return round(time.time() * 1000)


def _pairs(flat: list) -> dict[str, str]:
    return dict(zip(flat[::2], flat[1::2], strict=True))


def _offset(page_token: str | None) -> int:
    if page_token is None:
        return 0
    if not page_token.isdigit():
        raise UsageError(f"bad page token {page_token!r}")
    return int(page_token)
