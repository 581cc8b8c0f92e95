"""RedisArtifactService: versioned artifacts in Redis lists, one list per artifact, one JSON entry per version.

An entry is ``{"part": <Part JSON>, "meta": {"createTime", "customMetadata"}}``; in the Part's JSON
``inline_data`` bytes are base64, so binary content survives. Entries written before metadata was kept are a
bare Part's JSON and still load (their metadata has no time).
"""

from __future__ import annotations

import json
import time
from typing import Any

from google.genai import types

from ..errors import FencedOutError
from ..redis_store import keys
from ..redis_store.codec import text
from ..redis_store.connection import LoopClients
from ..redis_store.scripts import ARTIFACT_SAVE
from ..sessions.redis_session_service import fence_for
from .artifact_version import MAX_VERSION, ArtifactVersion, canonical_uri, mime_type_of
from .base_artifact_service import BaseArtifactService, is_user_scoped
from .rewind_tombstone import is_rewind_tombstone


def _scope(session_id: str, filename: str) -> str:
    return "user" if is_user_scoped(filename) else session_id


def _decode(raw: str | bytes) -> tuple[types.Part, dict[str, Any]]:
    """The Part and the metadata of one stored entry (a bare Part from before metadata was kept)."""
    stored = json.loads(raw)
    if isinstance(stored, dict) and set(stored) == {"part", "meta"}:  # a Part forbids extra keys: no confusion
        return types.Part.model_validate(stored["part"]), stored["meta"]
    return types.Part.model_validate(stored), {}


class RedisArtifactService(BaseArtifactService):
    """Every save appends a version (numbered from 0) and records the filename in its scope's index.

    A save from a worker's run is fenced like its event commits (``sessions.redis_session_service``): once the run lost its
    lease (cancelled, rewound, taken over) a late save raises ``FencedOutError`` and stores nothing.
    """

    def __init__(self, url: str | None = None, *, client=None):
        self._clients = LoopClients(url, client)

    async def aclose(self) -> None:
        """Close the connection pool this service opened for the running loop."""
        await self._clients.aclose()

    def _key(self, app_name: str, user_id: str, session_id: str, filename: str) -> str:
        return keys.artifact_versions(app_name, user_id, _scope(session_id, filename), filename)

    async def save_artifact(self, *, app_name, user_id, session_id, filename, artifact: types.Part,
                            custom_metadata=None) -> int:
        scope = _scope(session_id, filename)
        entry = {"part": artifact.model_dump(mode="json", exclude_none=True),
                 "meta": {"createTime": time.time(), "customMetadata": dict(custom_metadata or {})}}
        fence, token = fence_for(app_name, user_id, session_id)
        reply = await ARTIFACT_SAVE(
            self._clients.get(), versions=keys.artifact_versions(app_name, user_id, scope, filename),
            index=keys.artifact_index(app_name, user_id, scope), **fence._asdict(), fence_token=token,
            entry=json.dumps(entry), filename=filename)
        if text(reply[0]) == "fenced":
            raise FencedOutError(f"artifact {filename!r} of session {session_id!r}: fencing token {int(token)!r} is "
                                 f"not the current one ({text(reply[1]) or None!r}), checked at {fence}")
        return int(reply[1])

    async def _entry(self, app_name, user_id, session_id, filename, version) -> tuple[int, Any] | None:
        """``(version number, raw entry)``, or None; a version Redis cannot index is not looked up at all."""
        if version is not None and not 0 <= version <= MAX_VERSION:
            return None
        key = self._key(app_name, user_id, session_id, filename)
        if version is not None:
            raw = await self._clients.get().lindex(key, version)
            return None if raw is None else (version, raw)
        async with self._clients.get().pipeline(transaction=True) as pipe:
            pipe.llen(key)
            pipe.lindex(key, -1)
            length, raw = await pipe.execute()
        return None if raw is None else (length - 1, raw)

    async def load_artifact(self, *, app_name, user_id, session_id, filename, version=None) -> types.Part | None:
        found = await self._entry(app_name, user_id, session_id, filename, version)
        part = None if found is None else _decode(found[1])[0]
        return None if part is None or is_rewind_tombstone(part) else part

    async def get_artifact_version(self, *, app_name, user_id, session_id, filename, version=None):
        found = await self._entry(app_name, user_id, session_id, filename, version)
        return None if found is None else self._version(app_name, user_id, session_id, filename, *found)

    async def list_artifact_versions(self, *, app_name, user_id, session_id, filename) -> list[ArtifactVersion]:
        entries = await self._clients.get().lrange(self._key(app_name, user_id, session_id, filename), 0, -1)
        return [self._version(app_name, user_id, session_id, filename, number, raw)
                for number, raw in enumerate(entries)]

    @staticmethod
    def _version(app_name, user_id, session_id, filename, number: int, raw) -> ArtifactVersion:
        part, meta = _decode(raw)
        return ArtifactVersion(
            version=number, canonical_uri=canonical_uri(app_name, user_id, session_id, filename, number),
            custom_metadata=meta.get("customMetadata") or {}, create_time=meta.get("createTime") or 0.0,
            mime_type=mime_type_of(part),
        )

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
        return list(range(await self._clients.get().llen(self._key(app_name, user_id, session_id, filename))))
