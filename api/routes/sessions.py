"""ADK-compatible session routes: list apps; create, list, get, update (state) and delete sessions; rewind one
and cancel what runs on it, on the routes ADK's open proposals give them.

Listing keeps ADK's shape (a plain JSON list) and pages it: ``?pageSize=`` (default and most 1000) and
``?pageToken=``; the token of the next page, when there is one, is in the ``X-Next-Page-Token`` header.
"""

from __future__ import annotations

import uuid
from typing import Any

from fastapi import APIRouter, Body, Depends, Query, Response

from api import doors
from api.access.auth import Caller
from api.deps import Services, UserScope, get_caller, get_services, get_settings, user_scope
from api.routes.invocations import queue_of
from api.settings import ApiSettings
from api.views.schemas import (
    CancelRequest,
    CreateSessionRequest,
    RewindRequest,
    SessionCancelOut,
    UpdateSessionRequest,
)
from runtime.errors import InvocationNotFoundError, SessionNotFoundError
from runtime.events import Event, EventActions
from runtime.sessions import Session

router = APIRouter(tags=["sessions"])

SESSION = "/apps/{app_name}/users/{user_id}/sessions/{session_id}"
NEXT_PAGE_HEADER = "X-Next-Page-Token"
MAX_SESSIONS_PAGE = 1000


def session_json(session: Session, *, with_events: bool = True) -> dict[str, Any]:
    """The wire form of a session (camelCase, as ADK's api server sends it). The store's ``version`` (a commit
    counter) stays out: ADK's own Session model forbids unknown fields, so its clients could not read it."""
    exclude = {"version"} if with_events else {"version", "events"}
    body = session.model_dump(mode="json", by_alias=True, exclude_none=True, exclude=exclude)
    if not with_events:
        body["events"] = []
    return body


@router.get("/list-apps", response_model=list[str])
async def list_apps(settings: ApiSettings = Depends(get_settings), caller: Caller = Depends(get_caller)):
    """The apps this API serves that the caller's key may touch."""
    return [name for name in settings.served.names() if caller.allows_app(name)]


async def _create(services: Services, scope: UserScope, session_id: str | None, state, events) -> dict:
    if services.queue is not None:  # through the queue: it registers the session's idle expiry, if any
        session = await services.queue.create_session(scope.app_name, scope.user_id, session_id, state)
    else:
        session = await services.session_service.create_session(
            app_name=scope.app_name, user_id=scope.user_id, state=state, session_id=session_id
        )
    for event in events or []:
        await services.session_service.append_event(session, event)
    return session_json(session)


@router.post("/apps/{app_name}/users/{user_id}/sessions")
async def create_session(
    body: CreateSessionRequest | None = Body(default=None),
    scope: UserScope = Depends(user_scope),
    services: Services = Depends(get_services),
):
    """Create a session (optionally with an id, initial state and seed events); 409 if the id is taken."""
    body = body or CreateSessionRequest()
    return await _create(services, scope, body.session_id, body.state, body.events)


@router.post(SESSION + ":cancel")
async def cancel_session(
    session_id: str,
    body: CancelRequest | None = Body(default=None),
    scope: UserScope = Depends(user_scope),
    services: Services = Depends(get_services),
    settings: ApiSettings = Depends(get_settings),
) -> SessionCancelOut:
    """Cancel what runs on the session (the route google/adk-python PR #5983 proposes for issue #2425): every
    invocation queued, running or parked on it, as ``POST /invocations/{id}/cancel`` does each; 404 when none is.

    Declared before ``POST .../sessions/{session_id}``, which would otherwise take ``abc:cancel`` as a new id."""
    reason = (body or CancelRequest(reason="cancelled over HTTP (session :cancel)")).reason
    cancelled = await doors.cancel_session(scope.caller, doors.Guards.of(settings), queue_of(services),
                                           scope.app_name, scope.user_id, session_id, reason)
    if not cancelled:
        raise InvocationNotFoundError(f"session {session_id!r} has no invocation queued, running or parked")
    return SessionCancelOut(cancelled=cancelled)


@router.post(SESSION + "/rewind")
async def rewind_session(
    session_id: str,
    body: RewindRequest,
    scope: UserScope = Depends(user_scope),
    services: Services = Depends(get_services),
    settings: ApiSettings = Depends(get_settings),
):
    """Rewind the session to before an invocation (``Runner.rewind_async``: history, session state and session
    artifacts as they were; the route of google/adk-python PRs #6704 and #7178); the rewound session. 404 for an
    unknown session or an invocation with no event in it; 409 while an invocation is queued, running or parked on
    the session (cancel it first, or enqueue with ``multitaskStrategy`` ``rollback``)."""
    session = await doors.rewind(scope.caller, doors.Guards.of(settings), queue_of(services), scope.app_name,
                                 scope.user_id, session_id, body.rewind_before_invocation_id)
    return session_json(session)


@router.post(SESSION)
async def create_session_with_id(
    session_id: str,
    state: dict[str, Any] | None = Body(default=None),
    scope: UserScope = Depends(user_scope),
    services: Services = Depends(get_services),
):
    """ADK's create-with-id: the body is the initial state; 409 if the id is taken."""
    return await _create(services, scope, session_id, state, None)


@router.get("/apps/{app_name}/users/{user_id}/sessions")
async def list_sessions(
    response: Response,
    page_size: int = Query(default=MAX_SESSIONS_PAGE, alias="pageSize", ge=1, le=MAX_SESSIONS_PAGE),
    page_token: str | None = Query(default=None, alias="pageToken", max_length=2000),
    scope: UserScope = Depends(user_scope),
    services: Services = Depends(get_services),
):
    """A page of the user's sessions in the app, by id, without their events (a plain list, as in ADK); the
    next page's token is in the ``X-Next-Page-Token`` header."""
    if services.queue is not None:
        page = await services.queue.list_sessions(scope.app_name, scope.user_id, page_size=page_size,
                                                  page_token=page_token)
        sessions, next_token = page.items, page.next_page_token
    else:
        listed = await services.session_service.list_sessions(app_name=scope.app_name, user_id=scope.user_id)
        sessions, next_token = _page_by_id(listed.sessions, page_size, page_token)
    if next_token is not None:
        response.headers[NEXT_PAGE_HEADER] = next_token
    return [session_json(session, with_events=False) for session in sessions]


def _page_by_id(sessions: list[Session], page_size: int, page_token: str | None) -> tuple[list[Session], str | None]:
    """A page of sessions held in memory, in the same order and with the same tokens as the Redis listing."""
    from worker.records.listing import decode_token, encode_token

    after = str(decode_token(page_token, "s")[0]) if page_token else None
    ordered = sorted((s for s in sessions if after is None or s.id > after), key=lambda s: s.id)
    page = ordered[:page_size]
    return page, encode_token("s", page[-1].id) if len(ordered) > page_size else None


@router.get(SESSION)
async def get_session(
    session_id: str, scope: UserScope = Depends(user_scope), services: Services = Depends(get_services)
):
    """One session with its events and merged state; 404 when it does not exist."""
    session = await load_session(services, scope, session_id)
    return session_json(session)


@router.patch(SESSION)
async def update_session(
    session_id: str,
    body: UpdateSessionRequest,
    scope: UserScope = Depends(user_scope),
    services: Services = Depends(get_services),
):
    """ADK's update: commit the state delta as an event authored ``user`` (no agent runs); the updated session.

    The dev UI renames a session this way (``__session_metadata__.displayName``), so the name survives a reload.
    """
    session = await load_session(services, scope, session_id)
    event = Event(invocation_id="p-" + str(uuid.uuid4()), author="user",
                  actions=EventActions(state_delta=body.state_delta))
    await services.session_service.append_event(session, event)
    return session_json(session)


@router.delete(SESSION)
async def delete_session(
    session_id: str, scope: UserScope = Depends(user_scope), services: Services = Depends(get_services),
    settings: ApiSettings = Depends(get_settings),
):
    """Delete a session and every key of it; its queued, running or parked invocations are cancelled (saying
    so) and leave the inbox. Deleting one that does not exist is not an error (as in ADK)."""
    await doors.delete_session(scope.caller, doors.Guards.of(settings), services.queue, scope.app_name,
                               scope.user_id, session_id, session_service=services.session_service)
    return None


async def load_session(services: Services, scope: UserScope, session_id: str) -> Session:
    """The session, or SessionNotFoundError (404)."""
    session = await services.session_service.get_session(
        app_name=scope.app_name, user_id=scope.user_id, session_id=session_id
    )
    if session is None:
        raise SessionNotFoundError(
            f"session {session_id!r} not found for user {scope.user_id!r} in app {scope.app_name!r}"
        )
    return session
