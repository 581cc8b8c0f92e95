"""Schedule routes: a user's cron and interval schedules in an app, under ``/apps/{app}/users/{user}/schedules``.

Made, listed, read, changed (PATCH), deleted, paused, resumed and triggered (a run now) through the worker's
client (``AgentqClient.schedules``); the caller's key must allow the app and user, as for sessions. A bad spec
(cron, timezone, interval below 1 s, end before start, message) is a 422 or 400 naming it, and stores nothing.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Body, Depends, Query, Response

from api import doors
from api.deps import Services, UserScope, get_services, get_settings, user_scope
from api.routes.invocations import queue_of
from api.settings import ApiSettings
from api.views.schemas import (
    EnqueueResponse,
    ScheduleCreateRequest,
    ScheduleList,
    ScheduleRunOut,
    ScheduleRuns,
)
from worker.schedules import Schedule

router = APIRouter(tags=["schedules"])

SCHEDULES = "/apps/{app_name}/users/{user_id}/schedules"
ONE = SCHEDULES + "/{schedule_id}"


@router.post(SCHEDULES, status_code=201, response_model=Schedule)
async def create_schedule(body: ScheduleCreateRequest, scope: UserScope = Depends(user_scope),
                          services: Services = Depends(get_services),
                          settings: ApiSettings = Depends(get_settings)) -> Schedule:
    """Store a schedule; 201 with it (its ``nextRunAt``). 409 for a taken ``id``."""
    spec = body.model_dump(exclude={"id"}, exclude_none=True)
    schedule = await doors.create_schedule(scope.caller, doors.Guards.of(settings), queue_of(services),
                                           scope.app_name, scope.user_id, spec, schedule_id=body.id)
    return schedule


@router.get(SCHEDULES)
async def list_schedules(
    page_size: int = Query(default=100, ge=1, le=1000, alias="pageSize"),
    page_token: str | None = Query(default=None, alias="pageToken", max_length=32),
    scope: UserScope = Depends(user_scope), services: Services = Depends(get_services),
) -> ScheduleList:
    """The user's schedules in the app, oldest first."""
    page = await queue_of(services).schedules.page(scope.app_name, scope.user_id, page_size=page_size,
                                                   page_token=page_token)
    return ScheduleList(schedules=page.items, next_page_token=page.next_page_token)


@router.get(ONE, response_model=Schedule)
async def get_schedule(schedule_id: str, scope: UserScope = Depends(user_scope),
                       services: Services = Depends(get_services)) -> Schedule:
    """One schedule and where it stands (paused, next run, runs, missed ticks, last error)."""
    return (await queue_of(services).schedules.get(scope.app_name, scope.user_id, schedule_id))


@router.patch(ONE, response_model=Schedule)
async def update_schedule(schedule_id: str, changes: dict[str, Any] = Body(...),
                          scope: UserScope = Depends(user_scope), services: Services = Depends(get_services),
                          settings: ApiSettings = Depends(get_settings)) -> Schedule:
    """Change spec fields (null removes one); the whole result is checked, and a bad one stores nothing."""
    schedule = await doors.update_schedule(scope.caller, doors.Guards.of(settings), queue_of(services),
                                           scope.app_name, scope.user_id, schedule_id, changes)
    return schedule


@router.delete(ONE, status_code=204)
async def delete_schedule(schedule_id: str, scope: UserScope = Depends(user_scope),
                          services: Services = Depends(get_services),
                          settings: ApiSettings = Depends(get_settings)) -> Response:
    """Delete it; the invocations it enqueued stay until their retention ends."""
    await doors.delete_schedule(scope.caller, doors.Guards.of(settings), queue_of(services), scope.app_name,
                                scope.user_id, schedule_id)
    return Response(status_code=204)


@router.post(ONE + "/pause", response_model=Schedule)
async def pause_schedule(schedule_id: str, scope: UserScope = Depends(user_scope),
                         services: Services = Depends(get_services),
                         settings: ApiSettings = Depends(get_settings)) -> Schedule:
    """No ticks fire until it is resumed."""
    return await doors.pause_schedule(scope.caller, doors.Guards.of(settings), queue_of(services), scope.app_name,
                                      scope.user_id, schedule_id)


@router.post(ONE + "/resume", response_model=Schedule)
async def resume_schedule(schedule_id: str, scope: UserScope = Depends(user_scope),
                          services: Services = Depends(get_services),
                          settings: ApiSettings = Depends(get_settings)) -> Schedule:
    """Ticks fire again from the first one after now (those that fell while paused never run)."""
    return await doors.resume_schedule(scope.caller, doors.Guards.of(settings), queue_of(services),
                                       scope.app_name, scope.user_id, schedule_id)


@router.post(ONE + "/trigger", status_code=202)
async def trigger_schedule(schedule_id: str, scope: UserScope = Depends(user_scope),
                           services: Services = Depends(get_services),
                           settings: ApiSettings = Depends(get_settings)) -> EnqueueResponse:
    """Enqueue a run now, apart from the ticks (paused or not); 202 with its invocation id."""
    invocation_id = await doors.trigger_schedule(scope.caller, doors.Guards.of(settings), queue_of(services),
                                                 scope.app_name, scope.user_id, schedule_id)
    return EnqueueResponse(invocation_id=invocation_id, events_url=f"/invocations/{invocation_id}/events",
                           status_url=f"/invocations/{invocation_id}")


@router.get(ONE + "/runs")
async def schedule_runs(schedule_id: str, limit: int = Query(default=20, ge=1, le=200),
                        scope: UserScope = Depends(user_scope),
                        services: Services = Depends(get_services)) -> ScheduleRuns:
    """Its newest runs (ticks and triggers), newest first."""
    records = await queue_of(services).schedules.runs(scope.app_name, scope.user_id, schedule_id, limit=limit)
    return ScheduleRuns(runs=[ScheduleRunOut.from_record(record) for record in records])
