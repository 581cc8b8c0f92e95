"""Sessions, state and the services that store them (``google.adk.sessions`` in ADK).

``RedisSessionService`` is imported lazily so that using the in-memory service never imports redis.
"""

from ..errors import NotSupportedYetError
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


# Names google-adk 2.13 exports from google.adk.sessions that agentq does not provide yet: importing one fails
# naming it (NotSupportedYetError), so an agent moved over from ADK stops at its import, not later.
_NOT_SUPPORTED_YET = frozenset({
    "DatabaseSessionService", "StateSchemaError", "VertexAiSessionService",
})


def __getattr__(name: str):
    if name == "RedisSessionService":
        from .redis_session_service import RedisSessionService

        return RedisSessionService
    if name in _NOT_SUPPORTED_YET:
        raise NotSupportedYetError(__name__, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
