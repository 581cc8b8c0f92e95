"""Artifact services (``google.adk.artifacts`` in ADK). ``RedisArtifactService`` loads lazily (it imports redis)."""

from .artifact_version import ArtifactVersion
from .base_artifact_service import BaseArtifactService
from .in_memory_artifact_service import InMemoryArtifactService

__all__ = ["ArtifactVersion", "BaseArtifactService", "InMemoryArtifactService", "RedisArtifactService"]


def __getattr__(name: str):
    if name == "RedisArtifactService":
        from .redis_artifact_service import RedisArtifactService

        return RedisArtifactService
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
