"""ArtifactVersion: what is known about one saved version of an artifact (ADK's metadata shape)."""

from __future__ import annotations

import time
from typing import Any
from urllib.parse import quote

from google.genai import types
from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel

MAX_VERSION = 2**63 - 1
"""Versions above this cannot exist (Redis list indexes are 64-bit): they are simply not found."""


class ArtifactVersion(BaseModel):
    """One version's metadata; camelCase on the wire, as ADK's api server sends it."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True)

    version: int
    canonical_uri: str
    custom_metadata: dict[str, Any] = Field(default_factory=dict)
    create_time: float = Field(default_factory=time.time)
    mime_type: str | None = None


def canonical_uri(app_name: str, user_id: str, session_id: str, filename: str, version: int) -> str:
    """``agentq://apps/{app}/users/{user}/sessions/{sid}/artifacts/{name}/versions/{n}`` (the name keeps its ``/``)."""
    parts = [quote(app_name, safe=""), quote(user_id, safe=""), quote(session_id, safe=""), quote(filename, safe="/")]
    return "agentq://apps/{}/users/{}/sessions/{}/artifacts/{}/versions/{}".format(*parts, version)


def mime_type_of(artifact: types.Part) -> str | None:
    """The MIME type of binary content (inline or by reference); None for text."""
    blob = artifact.inline_data or artifact.file_data
    return blob.mime_type if blob is not None else None


def in_range(version: int | None, count: int) -> bool:
    """True when ``version`` (None: the latest) names one of ``count`` stored versions."""
    return count > 0 and (version is None or 0 <= version < count)
