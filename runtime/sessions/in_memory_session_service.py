"""InMemorySessionService: sessions in process memory, for tests and single-process use."""

from __future__ import annotations

import copy
import logging
from typing import Any

from ..errors import SessionExistsError
from ..events import Event
from ..ids import new_session_id
from .base_session_service import BaseSessionService, set_fields
from .session import GetSessionConfig, ListSessionsResponse, Session, filter_events
from .state import check_serialisable, split_by_scope

log = logging.getLogger(__name__)
_SYNC_DEPRECATED = "Deprecated. Please migrate to the async method."


class InMemorySessionService(BaseSessionService):
    """Keeps app, user and session state apart, as a durable store would, so behaviour matches Redis."""

    def __init__(self) -> None:
        # app -> user -> session id -> stored session (session-scoped state only)
        self._sessions: dict[str, dict[str, dict[str, Session]]] = {}
        self._user_state: dict[str, dict[str, dict[str, Any]]] = {}
        self._app_state: dict[str, dict[str, Any]] = {}

    async def create_session(
        self,
        *,
        app_name: str,
        user_id: str,
        state: dict[str, Any] | None = None,
        session_id: str | None = None,
    ) -> Session:
        return self._create(app_name=app_name, user_id=user_id, state=state, session_id=session_id)

    async def get_session(
        self,
        *,
        app_name: str,
        user_id: str,
        session_id: str,
        config: GetSessionConfig | None = None,
    ) -> Session | None:
        return self._get(app_name=app_name, user_id=user_id, session_id=session_id, config=config)

    async def list_sessions(self, *, app_name: str, user_id: str | None = None) -> ListSessionsResponse:
        return self._list(app_name=app_name, user_id=user_id)

    async def delete_session(self, *, app_name: str, user_id: str, session_id: str) -> None:
        self._delete(app_name=app_name, user_id=user_id, session_id=session_id)

    # --- ADK's synchronous variants (deprecated there too): same behaviour, for code that has no event loop ---

    def create_session_sync(
        self,
        *,
        app_name: str,
        user_id: str,
        state: dict[str, Any] | None = None,
        session_id: str | None = None,
    ) -> Session:
        """``create_session`` without awaiting."""
        log.warning(_SYNC_DEPRECATED)
        return self._create(app_name=app_name, user_id=user_id, state=state, session_id=session_id)

    def get_session_sync(
        self,
        *,
        app_name: str,
        user_id: str,
        session_id: str,
        config: GetSessionConfig | None = None,
    ) -> Session | None:
        """``get_session`` without awaiting."""
        log.warning(_SYNC_DEPRECATED)
        return self._get(app_name=app_name, user_id=user_id, session_id=session_id, config=config)

    def list_sessions_sync(self, *, app_name: str, user_id: str | None = None) -> ListSessionsResponse:
        """``list_sessions`` without awaiting."""
        log.warning(_SYNC_DEPRECATED)
        return self._list(app_name=app_name, user_id=user_id)

    def delete_session_sync(self, *, app_name: str, user_id: str, session_id: str) -> None:
        """``delete_session`` without awaiting."""
        log.warning(_SYNC_DEPRECATED)
        self._delete(app_name=app_name, user_id=user_id, session_id=session_id)

    # --- storage ---

    def _create(
        self, *, app_name: str, user_id: str, state: dict[str, Any] | None, session_id: str | None
    ) -> Session:
        session_id = (session_id or "").strip() or new_session_id()
        by_user = self._sessions.setdefault(app_name, {}).setdefault(user_id, {})
        if session_id in by_user:
            raise SessionExistsError(f"session {session_id!r} already exists for app {app_name!r}, user {user_id!r}")
        scopes = split_by_scope(state or {})
        check_serialisable(state or {})
        self._app_state.setdefault(app_name, {}).update(copy.deepcopy(scopes["app"]))
        self._user_state.setdefault(app_name, {}).setdefault(user_id, {}).update(copy.deepcopy(scopes["user"]))
        stored = Session(id=session_id, app_name=app_name, user_id=user_id, state=copy.deepcopy(scopes["session"]))
        by_user[session_id] = stored
        return self._view(stored, None)

    def _get(
        self, *, app_name: str, user_id: str, session_id: str, config: GetSessionConfig | None
    ) -> Session | None:
        stored = self._sessions.get(app_name, {}).get(user_id, {}).get(session_id)
        return None if stored is None else self._view(stored, config)

    def _list(self, *, app_name: str, user_id: str | None) -> ListSessionsResponse:
        users = self._sessions.get(app_name, {})
        chosen = [users.get(user_id, {})] if user_id is not None else list(users.values())
        sessions = []
        for by_id in chosen:
            for stored in by_id.values():
                view = self._view(stored, None)
                view.events = []
                sessions.append(view)
        return ListSessionsResponse(sessions=sessions)

    def _delete(self, *, app_name: str, user_id: str, session_id: str) -> None:
        self._sessions.get(app_name, {}).get(user_id, {}).pop(session_id, None)

    async def append_event(self, session: Session, event: Event) -> Event:
        if event.partial:
            return event
        self._prepare_event(event)
        stored = self._sessions.get(session.app_name, {}).get(session.user_id, {}).get(session.id)
        self._apply_to_live_session(session, event)
        if stored is None:
            return event  # ADK keeps appending to a detached session object; so do we
        scopes = split_by_scope(event.actions.state_delta)
        if scopes["app"]:
            self._app_state.setdefault(session.app_name, {}).update(copy.deepcopy(scopes["app"]))
        if scopes["user"]:
            by_app = self._user_state.setdefault(session.app_name, {})
            by_app.setdefault(session.user_id, {}).update(copy.deepcopy(scopes["user"]))
        if scopes["session"]:
            stored.state.update(copy.deepcopy(scopes["session"]))
        stored.events.append(event)
        set_fields(stored, version=stored.version + 1, last_update_time=session.last_update_time)
        return event

    def _view(self, stored: Session, config: GetSessionConfig | None) -> Session:
        """A copy the caller may mutate: merged state, filtered events (events are shared, never mutated)."""
        state = copy.deepcopy(stored.state)
        state.update(copy.deepcopy(self._app_state.get(stored.app_name, {})))
        state.update(copy.deepcopy(self._user_state.get(stored.app_name, {}).get(stored.user_id, {})))
        return Session.model_construct(
            id=stored.id,
            app_name=stored.app_name,
            user_id=stored.user_id,
            state=state,
            events=filter_events(stored.events, config),
            last_update_time=stored.last_update_time,
            version=stored.version,
        )
