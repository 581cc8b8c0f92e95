"""WorkerSessionService: the Redis session service, plus a hook the worker host uses to learn of commits."""

from __future__ import annotations

from collections.abc import Callable

from runtime.events import Event
from runtime.redis_store.replication import wait_for_replicas
from runtime.sessions.redis_session_service import RedisSessionService
from runtime.sessions.session import Session


class WorkerSessionService(RedisSessionService):
    """``after_commit(event)`` (when set) runs on the loop after each event is committed."""

    after_commit: Callable[[Event], None] | None = None

    async def append_event(self, session: Session, event: Event) -> Event:
        event = await super().append_event(session, event)
        if not event.partial:  # with AGENTQ_REDIS_MIN_REPLICAS: acknowledged only once replicated
            await wait_for_replicas(self._clients.mux(), f"event {event.id!r}")
        if self.after_commit is not None and not event.partial:
            self.after_commit(event)
        return event
