"""The session an AgentTool runs its agent in: one per call, on the caller's session service.

It lives where the caller's session lives (same service, app and user), under ids derived from the call, so
a caller that resumes in another worker, after a restart, finds its agent's paused invocation again.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..errors import SessionExistsError
from ..ids import derived_uuid, invocation_id_of, uuid4_str
from ..sessions.state import State

if TYPE_CHECKING:
    from ..contexts.invocation_context import InvocationContext
    from ..sessions import BaseSessionService, Session

_SHARED = (State.APP_PREFIX, State.USER_PREFIX, State.TEMP_PREFIX)


@dataclass(frozen=True, kw_only=True)
class ChildSession:
    """Where one AgentTool call runs its agent: a session of the caller's app and user, and one invocation.

    ``parent_session_id`` and ``parent_invocation_id`` name the caller: a session service that can link a child
    to them (the worker's: ``link_child_session``) deletes the child with the parent's session or its
    invocation's cancellation, so a paused child does not outlive them.
    """

    app_name: str
    user_id: str
    session_id: str
    invocation_id: str
    parent_session_id: str | None = None
    parent_invocation_id: str | None = None

    @classmethod
    def of(cls, parent: InvocationContext, call_id: str | None) -> ChildSession:
        """The child of call ``call_id`` of the caller's invocation: the same ids whenever the call runs."""
        # The invocation id is part of the key: a model may reuse its own call ids in a later turn.
        key = "\n".join((parent.app_name, parent.user_id, parent.session.id, parent.invocation_id,
                         call_id or uuid4_str()))  # no call id (a tool run by hand): nothing to resume
        digest = derived_uuid(key)
        return cls(app_name=parent.app_name, user_id=parent.user_id, session_id=digest,
                   invocation_id=invocation_id_of(digest), parent_session_id=parent.session.id,
                   parent_invocation_id=parent.invocation_id)

    async def open(self, service: BaseSessionService, state: dict[str, Any]) -> tuple[Session, bool]:
        """The session, and whether it existed; a new one starts with ``state``'s session-scope keys."""
        session = await self.get(service)
        if session is not None:
            return session, True
        await self._link(service)  # first: a crash after the create cannot leave an unlinked child
        try:
            created = await service.create_session(
                app_name=self.app_name, user_id=self.user_id, state=_seed(state), session_id=self.session_id
            )
        except SessionExistsError:  # an earlier attempt at this call made it between our read and our write
            session = await self.get(service)
            if session is None:
                raise
            return session, True
        return created, False

    async def get(self, service: BaseSessionService) -> Session | None:
        """The session with its whole history, or None when there is none (yet, or any more)."""
        return await service.get_session(app_name=self.app_name, user_id=self.user_id, session_id=self.session_id)

    async def delete(self, service: BaseSessionService) -> None:
        """Drop the session once the agent has answered: nothing will resume it."""
        await service.delete_session(app_name=self.app_name, user_id=self.user_id, session_id=self.session_id)
        unlink = getattr(service, "unlink_child_session", None)
        if unlink is not None and self.parent_session_id is not None:
            await unlink(app_name=self.app_name, user_id=self.user_id, session_id=self.parent_session_id,
                         child_session_id=self.session_id)

    async def _link(self, service: BaseSessionService) -> None:
        """Tell a service that deletes children with their parents (the worker's) about this one."""
        link = getattr(service, "link_child_session", None)
        if link is not None and self.parent_session_id is not None and self.parent_invocation_id is not None:
            await link(app_name=self.app_name, user_id=self.user_id, session_id=self.parent_session_id,
                       invocation_id=self.parent_invocation_id, child_session_id=self.session_id)


def _seed(state: dict[str, Any]) -> dict[str, Any]:
    """The caller's session-scope keys. ``app:`` and ``user:`` keys are shared already (same app and user), and
    writing copies back could overwrite newer values; ``temp:`` keys live only in the caller's invocation."""
    return {key: value for key, value in state.items() if not key.startswith(_SHARED)}
