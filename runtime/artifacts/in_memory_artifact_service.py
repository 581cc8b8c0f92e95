"""InMemoryArtifactService: artifacts in process memory."""

from __future__ import annotations

from google.genai import types

from .base_artifact_service import BaseArtifactService, is_user_scoped


class InMemoryArtifactService(BaseArtifactService):
    """Versions are kept as a list per artifact path."""

    def __init__(self) -> None:
        self._versions: dict[tuple[str, ...], list[types.Part]] = {}

    @staticmethod
    def _path(app_name: str, user_id: str, session_id: str, filename: str) -> tuple[str, ...]:
        if is_user_scoped(filename):
            return (app_name, user_id, "user", filename)
        return (app_name, user_id, session_id, filename)

    async def save_artifact(self, *, app_name, user_id, session_id, filename, artifact) -> int:
        versions = self._versions.setdefault(self._path(app_name, user_id, session_id, filename), [])
        versions.append(artifact.model_copy(deep=True))
        return len(versions) - 1

    async def load_artifact(self, *, app_name, user_id, session_id, filename, version=None):
        versions = self._versions.get(self._path(app_name, user_id, session_id, filename))
        if not versions:
            return None
        if version is None:
            return versions[-1]
        if not 0 <= version < len(versions):
            return None
        return versions[version]

    async def list_artifact_keys(self, *, app_name, user_id, session_id) -> list[str]:
        keys = {
            path[3]
            for path in self._versions
            if path[0] == app_name and path[1] == user_id and path[2] in (session_id, "user")
        }
        return sorted(keys)

    async def delete_artifact(self, *, app_name, user_id, session_id, filename) -> None:
        self._versions.pop(self._path(app_name, user_id, session_id, filename), None)

    async def list_versions(self, *, app_name, user_id, session_id, filename) -> list[int]:
        return list(range(len(self._versions.get(self._path(app_name, user_id, session_id, filename), []))))
