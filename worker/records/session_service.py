"""WorkerSessionService: the Redis session service, plus a hook the worker host uses to learn of commits."""

from __future__ import annotations

from collections.abc import Callable

from runtime.events import Event
from runtime.redis_store import keys
from runtime.redis_store.replication import wait_for_replicas
from runtime.sessions.redis_session_service import RedisSessionService
from runtime.sessions.session import Session
from worker.records import child_sessions


class WorkerSessionService(RedisSessionService):
    """``after_commit(event)`` (when set) runs on the loop after each event is committed."""

    after_commit: Callable[[Event], None] | None = None

    async def append_event(self, session: Session, event: Event) -> Event:
        event = await super().append_event(session, event)
        if not event.partial:  # with AGENTQ_REDIS_MIN_REPLICAS: acknowledged only once replicated
            await wait_for_replicas(self._clients.mux(), f"event {event.id!r}",
                                    key=keys.session_meta(session.app_name, session.user_id, session.id))
        if self.after_commit is not None and not event.partial:
            self.after_commit(event)
        return event

    async def link_child_session(self, *, app_name: str, user_id: str, session_id: str, invocation_id: str,
                                 child_session_id: str) -> None:
        """Record an AgentTool's child session, deleted with the parent session or invocation (worker.records.child_sessions)."""
        await child_sessions.link(self._clients.mux(), app_name, user_id, session_id, invocation_id, child_session_id)

    async def unlink_child_session(self, *, app_name: str, user_id: str, session_id: str,
                                   child_session_id: str) -> None:
        """Forget a child session the AgentTool deleted itself."""
        await child_sessions.unlink(self._clients.mux(), app_name, user_id, session_id, child_session_id)
