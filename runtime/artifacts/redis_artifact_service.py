"""RedisArtifactService: versioned artifacts in Redis lists, one list per artifact, one JSON Part per version.

Parts are stored as their JSON form, in which ``inline_data`` bytes are base64, so binary content survives.
"""

from __future__ import annotations

from google.genai import types

from ..redis_store import keys
from ..redis_store.codec import text
from ..redis_store.connection import LoopClients
from .base_artifact_service import BaseArtifactService, is_user_scoped


def _scope(session_id: str, filename: str) -> str:
    return "user" if is_user_scoped(filename) else session_id


class RedisArtifactService(BaseArtifactService):
    """Every save appends a version (numbered from 0) and records the filename in its scope's index."""

    def __init__(self, url: str | None = None, *, client=None):
        self._clients = LoopClients(url, client)

    async def aclose(self) -> None:
        """Close the connection pool this service opened for the running loop."""
        await self._clients.aclose()

    async def save_artifact(self, *, app_name, user_id, session_id, filename, artifact: types.Part) -> int:
        scope = _scope(session_id, filename)
        async with self._clients.get().pipeline(transaction=True) as pipe:
            pipe.rpush(keys.artifact_versions(app_name, user_id, scope, filename), artifact.model_dump_json(
                exclude_none=True))
            pipe.sadd(keys.artifact_index(app_name, user_id, scope), filename)
            length, _ = await pipe.execute()
        return length - 1

    async def load_artifact(self, *, app_name, user_id, session_id, filename, version=None) -> types.Part | None:
        if version is not None and version < 0:
            return None
        key = keys.artifact_versions(app_name, user_id, _scope(session_id, filename), filename)
        raw = await self._clients.get().lindex(key, -1 if version is None else version)
        return None if raw is None else types.Part.model_validate_json(raw)

    async def list_artifact_keys(self, *, app_name, user_id, session_id) -> list[str]:
        names = await self._clients.get().sunion(
            [keys.artifact_index(app_name, user_id, session_id), keys.artifact_index(app_name, user_id, "user")]
        )
        return sorted(map(text, names))

    async def delete_artifact(self, *, app_name, user_id, session_id, filename) -> None:
        scope = _scope(session_id, filename)
        async with self._clients.get().pipeline(transaction=True) as pipe:
            pipe.delete(keys.artifact_versions(app_name, user_id, scope, filename))
            pipe.srem(keys.artifact_index(app_name, user_id, scope), filename)
            await pipe.execute()

    async def list_versions(self, *, app_name, user_id, session_id, filename) -> list[int]:
        key = keys.artifact_versions(app_name, user_id, _scope(session_id, filename), filename)
        return list(range(await self._clients.get().llen(key)))
