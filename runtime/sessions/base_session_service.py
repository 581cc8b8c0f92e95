"""BaseSessionService: the storage seam for sessions, and the append rules every store shares."""

from __future__ import annotations

import abc
import time
from typing import Any

from pydantic import BaseModel

from ..events import Event
from .session import GetSessionConfig, ListSessionsResponse, Session
from .state import State, check_serialisable


class BaseSessionService(abc.ABC):
    """Creates, reads, lists and deletes sessions, and commits events to them.

    Subclasses implement storage; ``append_event`` here applies the rules every store shares:
    partial events are never stored, ``temp:`` keys are visible in the live session but never committed,
    and a value JSON cannot encode is refused before anything is written.
    """

    @abc.abstractmethod
    async def create_session(
        self,
        *,
        app_name: str,
        user_id: str,
        state: dict[str, Any] | None = None,
        session_id: str | None = None,
    ) -> Session:
        """Create a session; ``state`` keys are stored by prefix scope. Raises SessionExistsError on a taken id."""

    @abc.abstractmethod
    async def get_session(
        self,
        *,
        app_name: str,
        user_id: str,
        session_id: str,
        config: GetSessionConfig | None = None,
    ) -> Session | None:
        """The session with merged app/user/session state, or None when it does not exist."""

    @abc.abstractmethod
    async def list_sessions(self, *, app_name: str, user_id: str | None = None) -> ListSessionsResponse:
        """The sessions of an app (of one user when given), without events."""

    @abc.abstractmethod
    async def delete_session(self, *, app_name: str, user_id: str, session_id: str) -> None:
        """Delete a session and its events; deleting a missing session is not an error."""

    async def append_event(self, session: Session, event: Event) -> Event:
        """Commit ``event`` to ``session`` (in memory here; subclasses also persist it). Returns the event."""
        if event.partial:
            return event
        self._prepare_event(event)
        self._apply_to_live_session(session, event)
        return event

    def history_scratch(self, session: Session) -> dict:
        """Where the Runner keeps what it derives from ``session.events`` (the model contents of each agent and
        branch, ``flows.contents_cache``). A service that keeps parsed histories between reads returns the same
        dict for as long as it keeps ``session``'s, so later invocations extend that work instead of redoing
        it; by default a new dict, which lasts one invocation."""
        return {}

    # --- shared rules, usable by subclasses ---

    @staticmethod
    def _prepare_event(event: Event) -> None:
        """Validate the delta and drop ``temp:`` keys from what will be committed."""
        delta = event.actions.state_delta
        if not delta:
            return
        check_serialisable(delta)
        if any(key.startswith(State.TEMP_PREFIX) for key in delta):
            event.actions.state_delta = {
                key: value for key, value in delta.items() if not key.startswith(State.TEMP_PREFIX)
            }

    @staticmethod
    def _apply_to_live_session(session: Session, event: Event) -> None:
        """Apply the event to the caller's session object: state, history, version, clock."""
        if event.actions.state_delta:
            session.state.update(event.actions.state_delta)
        session.events.append(event)
        set_fields(session, version=session.version + 1,
                   last_update_time=event.timestamp if event.timestamp else time.time())


def set_fields(model: BaseModel, **values: Any) -> None:
    """``model.name = value`` for each of ``values`` (well typed) without pydantic's per-assignment checks,
    which cost more than the commit's own bookkeeping; the fields count as set, as after an assignment."""
    model.__dict__.update(values)
    model.__pydantic_fields_set__.update(values)
