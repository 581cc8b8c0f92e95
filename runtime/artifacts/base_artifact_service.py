"""BaseArtifactService: versioned binary artifacts, scoped to a session or (``user:`` names) to a user."""

from __future__ import annotations

import abc
from typing import Any

from google.genai import types

from .artifact_version import ArtifactVersion


def is_user_scoped(filename: str) -> bool:
    """``user:`` filenames are shared by all of a user's sessions in the app."""
    return filename.startswith("user:")


class BaseArtifactService(abc.ABC):
    """Saves and loads artifacts; every save makes a new version, numbered from 0.

    A version that cannot exist (negative, or beyond 64 bits) is simply not found.
    """

    @abc.abstractmethod
    async def save_artifact(
        self, *, app_name: str, user_id: str, session_id: str, filename: str, artifact: types.Part,
        custom_metadata: dict[str, Any] | None = None,
    ) -> int:
        """Store a new version of ``filename`` (with optional metadata of the caller's) and return its number."""

    @abc.abstractmethod
    async def load_artifact(
        self, *, app_name: str, user_id: str, session_id: str, filename: str, version: int | None = None
    ) -> types.Part | None:
        """The given version (latest when None), or None when there is no such artifact or version."""

    @abc.abstractmethod
    async def list_artifact_keys(self, *, app_name: str, user_id: str, session_id: str) -> list[str]:
        """Sorted filenames visible to the session (its own and the user's ``user:`` ones)."""

    @abc.abstractmethod
    async def delete_artifact(self, *, app_name: str, user_id: str, session_id: str, filename: str) -> None:
        """Delete every version of ``filename``."""

    @abc.abstractmethod
    async def list_versions(self, *, app_name: str, user_id: str, session_id: str, filename: str) -> list[int]:
        """The version numbers of ``filename``, ascending."""

    @abc.abstractmethod
    async def list_artifact_versions(
        self, *, app_name: str, user_id: str, session_id: str, filename: str
    ) -> list[ArtifactVersion]:
        """The metadata of every version of ``filename``, oldest first."""

    @abc.abstractmethod
    async def get_artifact_version(
        self, *, app_name: str, user_id: str, session_id: str, filename: str, version: int | None = None
    ) -> ArtifactVersion | None:
        """The metadata of one version (latest when None), or None when there is no such version."""
