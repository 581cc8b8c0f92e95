"""ScheduleClient: ``AgentqClient.schedules``, the methods backends, the API and the CLI manage schedules with."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from worker.schedules.store import ScheduleStore

if TYPE_CHECKING:
    from worker.records.listing import Page
    from worker.records.record import InvocationRecord
    from worker.records.store import InvocationStore
    from worker.schedules.spec import ScheduleSpec
    from worker.schedules.view import Schedule


class ScheduleClient:
    """Schedules of an app's users::

        schedule = await client.schedules.create("weather", "ann", {"cron": "0 7 * * *", "timezone": "Europe/Paris",
                                                                    "newMessage": "Weather in Paris today?"})
        await client.schedules.trigger("weather", "ann", schedule.id)   # a run now, apart from the ticks

    Raises ``UsageError`` for a bad spec (nothing stored), ``ScheduleNotFoundError`` for an unknown id,
    ``ConflictError`` for an id that is taken."""

    def __init__(self, store: InvocationStore, writes: Callable[[str], None] = lambda method: None):
        """``writes``: called with the method's name before anything is written (a reads-only client refuses)."""
        self._schedules = ScheduleStore(store)
        self._writes = writes

    async def create(self, app_name: str, user_id: str, spec: ScheduleSpec | dict[str, Any], *,
                     schedule_id: str | None = None, created_by: str | None = None) -> Schedule:
        """Store a schedule; its first tick is the first one after now (or ``startAt``). ``created_by``: the
        principal making it, recorded as the enqueuer of its ticks' runs."""
        self._writes("schedules.create")
        return await self._schedules.create(app_name, user_id, spec, schedule_id=schedule_id, created_by=created_by)

    async def get(self, app_name: str, user_id: str, schedule_id: str) -> Schedule:
        """One schedule."""
        return await self._schedules.get(app_name, user_id, schedule_id)

    async def page(self, app_name: str, user_id: str, *, page_size: int = 100,
                   page_token: str | None = None) -> Page[Schedule]:
        """A page of the user's schedules in the app, oldest first; pass ``next_page_token`` on."""
        from worker.records.listing import Page

        items, token = await self._schedules.list(app_name, user_id, page_size=page_size, page_token=page_token)
        return Page(items=items, next_page_token=token)

    async def update(self, app_name: str, user_id: str, schedule_id: str, changes: dict[str, Any]) -> Schedule:
        """Change spec fields (camelCase or snake_case; None removes one); the next tick is worked out again."""
        self._writes("schedules.update")
        return await self._schedules.update(app_name, user_id, schedule_id, changes)

    async def pause(self, app_name: str, user_id: str, schedule_id: str) -> Schedule:
        """No ticks fire until ``resume``."""
        self._writes("schedules.pause")
        return await self._schedules.pause(app_name, user_id, schedule_id)

    async def resume(self, app_name: str, user_id: str, schedule_id: str) -> Schedule:
        """Ticks fire again from the first one after now (those that fell while paused never run)."""
        self._writes("schedules.resume")
        return await self._schedules.resume(app_name, user_id, schedule_id)

    async def delete(self, app_name: str, user_id: str, schedule_id: str) -> None:
        """Delete it; the invocations it enqueued stay until their retention ends."""
        self._writes("schedules.delete")
        await self._schedules.delete(app_name, user_id, schedule_id)

    async def trigger(self, app_name: str, user_id: str, schedule_id: str, *, admit: bool = True,
                      principal: str | None = None) -> str:
        """Enqueue a run now (paused or not); the invocation id. ``admit=False`` when the caller applied the
        enqueue rate limits itself (the schedule door does, under the triggering principal); ``principal``: who
        triggers it, recorded as the run's enqueuer (default: the schedule's creator)."""
        self._writes("schedules.trigger")
        return await self._schedules.trigger(app_name, user_id, schedule_id, admit=admit, principal=principal)

    async def runs(self, app_name: str, user_id: str, schedule_id: str, *, limit: int = 20) -> list[InvocationRecord]:
        """Its newest runs, newest first (each record's ``schedule_id`` names it)."""
        return await self._schedules.runs(app_name, user_id, schedule_id, limit=limit)

    async def aclose(self) -> None:
        """Close the rate limits' connections (``AgentqClient.aclose`` calls it)."""
        await self._schedules.aclose()
