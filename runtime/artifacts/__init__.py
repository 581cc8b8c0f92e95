"""Artifact services (``google.adk.artifacts`` in ADK). ``RedisArtifactService`` loads lazily (it imports redis)."""

from ..errors import NotSupportedYetError
from .artifact_version import ArtifactVersion
from .base_artifact_service import BaseArtifactService
from .in_memory_artifact_service import InMemoryArtifactService

__all__ = ["ArtifactVersion", "BaseArtifactService", "InMemoryArtifactService", "RedisArtifactService"]


# Names google-adk 2.13 exports from google.adk.artifacts that agentq does not provide yet: importing one fails
# naming it (NotSupportedYetError), so an agent moved over from ADK stops at its import, not later.
_NOT_SUPPORTED_YET = frozenset({
    "FileArtifactService", "GcsArtifactService",
})


def __getattr__(name: str):
    if name == "RedisArtifactService":
        from .redis_artifact_service import RedisArtifactService

        return RedisArtifactService
    if name in _NOT_SUPPORTED_YET:
        raise NotSupportedYetError(__name__, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
