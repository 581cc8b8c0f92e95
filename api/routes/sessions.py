"""ADK-compatible session routes: list apps; create, list, get and delete sessions."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Body, Depends

from runtime.errors import SessionNotFoundError
from runtime.sessions import Session

from ..auth import Caller
from ..deps import Services, UserScope, get_caller, get_services, get_settings, user_scope
from ..schemas import CreateSessionRequest
from ..settings import ApiSettings

router = APIRouter(tags=["sessions"])

SESSION = "/apps/{app_name}/users/{user_id}/sessions/{session_id}"


def session_json(session: Session, *, with_events: bool = True) -> dict[str, Any]:
    """The wire form of a session (camelCase, as ADK's api server sends it)."""
    exclude = None if with_events else {"events"}
    body = session.model_dump(mode="json", by_alias=True, exclude_none=True, exclude=exclude)
    if not with_events:
        body["events"] = []
    return body


@router.get("/list-apps", response_model=list[str])
async def list_apps(settings: ApiSettings = Depends(get_settings), caller: Caller = Depends(get_caller)):
    """The apps this API serves that the caller's key may touch."""
    return sorted(name for name in settings.app_names if caller.allows_app(name))


async def _create(services: Services, scope: UserScope, session_id: str | None, state, events) -> dict:
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
async def list_sessions(scope: UserScope = Depends(user_scope), services: Services = Depends(get_services)):
    """The user's sessions in the app, without their events."""
    listed = await services.session_service.list_sessions(app_name=scope.app_name, user_id=scope.user_id)
    return [session_json(session, with_events=False) for session in listed.sessions]


@router.get(SESSION)
async def get_session(
    session_id: str, scope: UserScope = Depends(user_scope), services: Services = Depends(get_services)
):
    """One session with its events and merged state; 404 when it does not exist."""
    session = await load_session(services, scope, session_id)
    return session_json(session)


@router.delete(SESSION)
async def delete_session(
    session_id: str, scope: UserScope = Depends(user_scope), services: Services = Depends(get_services)
):
    """Delete a session; deleting one that does not exist is not an error (as in ADK)."""
    await services.session_service.delete_session(
        app_name=scope.app_name, user_id=scope.user_id, session_id=session_id
    )
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
