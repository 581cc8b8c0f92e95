"""The schedule doors: a schedule enqueues runs as its user, so changing one needs what enqueueing needs."""

from __future__ import annotations

from typing import Any

from api.access.auth import Caller
from api.doors.guards import Guards, check_scope, enqueued_by, require_role


def _guard(caller: Caller, guards: Guards, app_name: str, user_id: str, action: str) -> None:
    check_scope(guards, caller, app_name, user_id)
    require_role(caller, "enqueue", action)


async def create_schedule(caller: Caller, guards: Guards, queue: Any, app_name: str, user_id: str,
                          spec: dict[str, Any], schedule_id: str | None = None) -> Any:
    """Store a schedule: scope (404), role ``enqueue`` (403), then the store (409 for a taken id), with the caller
    as the schedule's creator: its ticks' runs are enqueued by it, so the approval rules (separation of duties)
    and the audit see the principal behind a scheduled run as they see it behind any other."""
    _guard(caller, guards, app_name, user_id, f"creating a schedule in app {app_name!r}")
    return await queue.schedules.create(app_name, user_id, spec, schedule_id=schedule_id,
                                        created_by=enqueued_by(caller))


async def update_schedule(caller: Caller, guards: Guards, queue: Any, app_name: str, user_id: str, schedule_id: str,
                          changes: dict[str, Any]) -> Any:
    """Change a schedule's spec fields: scope, role ``enqueue``, then the store (a bad result stores nothing)."""
    _guard(caller, guards, app_name, user_id, f"changing schedule {schedule_id!r}")
    return await queue.schedules.update(app_name, user_id, schedule_id, changes)


async def pause_schedule(caller: Caller, guards: Guards, queue: Any, app_name: str, user_id: str,
                         schedule_id: str) -> Any:
    """Stop a schedule's ticks: scope, role ``enqueue``, then the store."""
    _guard(caller, guards, app_name, user_id, f"pausing schedule {schedule_id!r}")
    return await queue.schedules.pause(app_name, user_id, schedule_id)


async def resume_schedule(caller: Caller, guards: Guards, queue: Any, app_name: str, user_id: str,
                          schedule_id: str) -> Any:
    """Let a schedule's ticks fire again: scope, role ``enqueue``, then the store."""
    _guard(caller, guards, app_name, user_id, f"resuming schedule {schedule_id!r}")
    return await queue.schedules.resume(app_name, user_id, schedule_id)


async def delete_schedule(caller: Caller, guards: Guards, queue: Any, app_name: str, user_id: str,
                          schedule_id: str) -> None:
    """Delete a schedule: scope, role ``enqueue``, then the store (its runs stay until their retention ends)."""
    _guard(caller, guards, app_name, user_id, f"deleting schedule {schedule_id!r}")
    await queue.schedules.delete(app_name, user_id, schedule_id)


async def trigger_schedule(caller: Caller, guards: Guards, queue: Any, app_name: str, user_id: str,
                           schedule_id: str) -> str:
    """Enqueue a schedule's run now: scope, role ``enqueue``, the caller's enqueue rate limits (429), then the
    store, told not to admit the run again under the schedule's own principal; the run's invocation id."""
    _guard(caller, guards, app_name, user_id, f"triggering schedule {schedule_id!r}")
    return await guards.rate_limits.admitted(
        queue, caller.principal_id, app_name, user_id,
        lambda: queue.schedules.trigger(app_name, user_id, schedule_id, admit=False, principal=enqueued_by(caller)),
        invocation_id=str)
