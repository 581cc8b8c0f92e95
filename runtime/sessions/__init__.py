"""Sessions, state and the services that store them (``google.adk.sessions`` in ADK).

``RedisSessionService`` is imported lazily so that using the in-memory service never imports redis.
"""

from .base_session_service import BaseSessionService
from .in_memory_session_service import InMemorySessionService
from .session import GetSessionConfig, ListSessionsResponse, Session
from .state import State

__all__ = [
    "BaseSessionService",
    "GetSessionConfig",
    "InMemorySessionService",
    "ListSessionsResponse",
    "RedisSessionService",
    "Session",
    "State",
]


def __getattr__(name: str):
    if name == "RedisSessionService":
        from .redis_session_service import RedisSessionService

        return RedisSessionService
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
