"""SSE routes: an invocation's events until it settles, and a session's events as they come."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

from fastapi import APIRouter, Depends, Header, Query, Response

from api.access.auth import Caller
from api.deps import Services, UserScope, get_caller, get_services, get_settings, user_scope
from api.errors import error_body
from api.routes.invocations import queue_of, visible_record
from api.routes.sessions import load_session
from api.settings import ApiSettings
from api.streams.event_stream import EventStreamResponse
from api.streams.sse import (
    InvalidLastEventIdError,
    check_entry_id,
    entry_before,
    entry_frame,
    entry_key,
    frame,
)
from api.views.metrics import Metrics, get_metrics
from api.views.worker_presence import waiting_notice
from runtime.statuses import FINAL

router = APIRouter(tags=["streams"])


async def entry_frames(entries: AsyncIterator[Any], metrics: Metrics) -> AsyncIterator[bytes]:
    """SSE frames of stream entries; a failure after the stream started becomes an ``event: error`` frame."""
    try:
        async for entry in entries:
            metrics.streamed.labels(kind=getattr(entry, "kind", "event")).inc()
            yield entry_frame(entry)
    except Exception as exc:
        yield frame(json.dumps(error_body(exc)), event="error")


def resume_point(last_event_id: str | None, after: str | None) -> str | None:
    """The entry id to resume after: ``Last-Event-ID`` first, else ``?after=`` (400 naming a bad one)."""
    return check_entry_id(last_event_id) or check_entry_id(after, "?after=")


def check_not_past(newest: str, resume_from: str) -> None:
    """400 when ``resume_from`` is past the stream's ``newest`` entry: the client cannot have seen it, and
    nothing after it would ever be read (new entries get smaller ids), so the stream would stay silent."""
    if newest != "0-0" and entry_key(resume_from) > entry_key(newest):
        raise InvalidLastEventIdError(
            f"Last-Event-ID (or ?after=) {resume_from!r} is past the newest entry of the stream ({newest!r}): "
            "resume after an id the stream sent"
        )


async def has_entries_after(services: Services, record: Any, resume_from: str) -> bool:
    """True when the invocation has stream entries after ``resume_from`` (a look that does not wait)."""
    entries = queue_of(services).session_events(record.app_name, record.user_id, record.session_id,
                                                after=resume_from, follow=False)
    try:
        async for entry in entries:
            if entry.invocation_id == record.id:
                return True
    finally:
        await entries.aclose()
    return False


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

    Resumes after ``Last-Event-ID`` (or ``?after=``); ends when the invocation settles. Resuming a completed,
    failed or cancelled invocation after its last entry answers 204 (an EventSource stops reconnecting);
    resuming one that may go on past the newest entry of its stream is a 400.
    """
    resume_from = resume_point(last_event_id, after)
    record = await visible_record(services, settings, caller, invocation_id)
    if resume_from is not None:
        newest = await queue_of(services).session_position(record.app_name, record.user_id, record.session_id)
        if record.status not in FINAL:  # running or parked: later entries may still come
            check_not_past(newest, resume_from)
        # A deleted session's stream is gone ("0-0"): the reader ends with the record's status, so let it.
        elif newest != "0-0" and not await has_entries_after(services, record, resume_from):
            return Response(status_code=204)  # all sent already: nothing more will ever come
    if resume_from is None and record.first_entry:
        # Where the client's own lookup would start (the invocation's first entry), without reading the
        # record a second time.
        resume_from = entry_before(record.first_entry)
    entries = queue_of(services).events(invocation_id, after=resume_from)
    frames = entry_frames(entries, metrics)
    notice = await waiting_notice(services.queue, record.app_name, record.status)
    if notice is not None:
        frames = _after_notice(invocation_id, notice, frames)
    return sse_response(frames, settings)


async def _after_notice(invocation_id: str, notice: str, frames: AsyncIterator[bytes]) -> AsyncIterator[bytes]:
    """An ``event: notice`` frame (no ``id:``: it is not a stream entry, so resuming never skips or repeats
    anything because of it), then ``frames``."""
    yield frame(json.dumps({"invocationId": invocation_id, "notice": notice}), event="notice")
    async for item in frames:
        yield item


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
    resume_from = resume_point(last_event_id, after)
    queue = queue_of(services)
    await load_session(services, scope, session_id)
    if resume_from is not None:
        check_not_past(await queue.session_position(scope.app_name, scope.user_id, session_id), resume_from)
    entries = queue.session_events(scope.app_name, scope.user_id, session_id, after=resume_from, follow=True)
    return sse_response(entry_frames(entries, metrics), settings)
