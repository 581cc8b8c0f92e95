"""InMemoryArtifactService: artifacts in process memory."""

from __future__ import annotations

import time

from google.genai import types

from .artifact_version import ArtifactVersion, canonical_uri, in_range, mime_type_of
from .base_artifact_service import BaseArtifactService, is_user_scoped
from .rewind_tombstone import is_rewind_tombstone


class InMemoryArtifactService(BaseArtifactService):
    """Versions are kept as a list of (part, metadata) per artifact path."""

    def __init__(self) -> None:
        self._versions: dict[tuple[str, ...], list[tuple[types.Part, ArtifactVersion]]] = {}

    @staticmethod
    def _path(app_name: str, user_id: str, session_id: str, filename: str) -> tuple[str, ...]:
        if is_user_scoped(filename):
            return (app_name, user_id, "user", filename)
        return (app_name, user_id, session_id, filename)

    async def save_artifact(self, *, app_name, user_id, session_id, filename, artifact, custom_metadata=None) -> int:
        versions = self._versions.setdefault(self._path(app_name, user_id, session_id, filename), [])
        number = len(versions)
        meta = ArtifactVersion(
            version=number, canonical_uri=canonical_uri(app_name, user_id, session_id, filename, number),
            custom_metadata=dict(custom_metadata or {}), create_time=time.time(), mime_type=mime_type_of(artifact),
        )
        versions.append((artifact.model_copy(deep=True), meta))
        return number

    def _one(self, app_name, user_id, session_id, filename, version):
        versions = self._versions.get(self._path(app_name, user_id, session_id, filename)) or []
        if not in_range(version, len(versions)):
            return None
        return versions[-1 if version is None else version]

    async def load_artifact(self, *, app_name, user_id, session_id, filename, version=None):
        found = self._one(app_name, user_id, session_id, filename, version)
        return None if found is None or is_rewind_tombstone(found[0]) else found[0]

    async def get_artifact_version(self, *, app_name, user_id, session_id, filename, version=None):
        found = self._one(app_name, user_id, session_id, filename, version)
        return None if found is None else found[1].model_copy()

    async def list_artifact_versions(self, *, app_name, user_id, session_id, filename):
        versions = self._versions.get(self._path(app_name, user_id, session_id, filename)) or []
        return [meta.model_copy() for _, meta in versions]

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
