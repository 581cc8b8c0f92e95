"""SSE routes: an invocation's events until it settles, and a session's events as they come."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

from fastapi import APIRouter, Depends, Header, Query

from ..auth import Caller
from ..deps import Services, UserScope, get_caller, get_services, get_settings, user_scope
from ..errors import error_body
from ..event_stream import EventStreamResponse
from ..metrics import Metrics, get_metrics
from ..settings import ApiSettings
from ..sse import check_entry_id, entry_before, entry_frame, frame
from .invocations import queue_of, visible_record
from .sessions import load_session

router = APIRouter(tags=["streams"])


async def entry_frames(entries: AsyncIterator[Any], metrics: Metrics) -> AsyncIterator[bytes]:
    """SSE frames of stream entries; a failure after the stream started becomes an ``event: error`` frame."""
    try:
        async for entry in entries:
            metrics.streamed.labels(kind=getattr(entry, "kind", "event")).inc()
            yield entry_frame(entry)
    except Exception as exc:
        yield frame(json.dumps(error_body(exc)), event="error")


def sse_response(frames: AsyncIterator[bytes], settings: ApiSettings) -> EventStreamResponse:
    """A text/event-stream response with keepalives."""
    return EventStreamResponse(frames, keepalive_s=settings.sse_keepalive_s)


@router.get("/invocations/{invocation_id}/events")
async def invocation_events(
    invocation_id: str,
    after: str | None = Query(default=None, description="resume after this stream entry id"),
    last_event_id: str | None = Header(default=None, alias="Last-Event-ID"),
    caller: Caller = Depends(get_caller),
    settings: ApiSettings = Depends(get_settings),
    services: Services = Depends(get_services),
    metrics: Metrics = Depends(get_metrics),
):
    """SSE of the invocation's events and status changes; each frame carries its stream entry ``id:``.

    Resumes after ``Last-Event-ID`` (or ``?after=``); ends when the invocation settles.
    """
    resume_from = check_entry_id(last_event_id) or check_entry_id(after)
    record = await visible_record(services, settings, caller, invocation_id)
    if resume_from is None and record.first_entry:
        # Where the client's own lookup would start (the invocation's first entry), without reading the
        # record a second time.
        resume_from = entry_before(record.first_entry)
    entries = queue_of(services).events(invocation_id, after=resume_from)
    return sse_response(entry_frames(entries, metrics), settings)


@router.get("/apps/{app_name}/users/{user_id}/sessions/{session_id}/events")
async def session_events(
    session_id: str,
    after: str | None = Query(default=None, description="resume after this stream entry id"),
    last_event_id: str | None = Header(default=None, alias="Last-Event-ID"),
    scope: UserScope = Depends(user_scope),
    settings: ApiSettings = Depends(get_settings),
    services: Services = Depends(get_services),
    metrics: Metrics = Depends(get_metrics),
):
    """SSE of every event and status change of the session, following new ones until the client leaves."""
    resume_from = check_entry_id(last_event_id) or check_entry_id(after)
    queue = queue_of(services)
    await load_session(services, scope, session_id)
    entries = queue.session_events(scope.app_name, scope.user_id, session_id, after=resume_from, follow=True)
    return sse_response(entry_frames(entries, metrics), settings)
