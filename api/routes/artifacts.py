"""ADK-compatible artifact routes under ``.../sessions/{session_id}/artifacts``.

Artifact names may contain ``/`` (``reports/q1.png``), so the name is a path parameter: the routes that end in
``/versions...`` are declared before the catch-all load route, as in ADK's api server. A version is a number
or ``latest``; one that cannot exist (negative, beyond 64 bits) is not found.
"""

from __future__ import annotations

from fastapi import APIRouter, Depends, Query

from api.deps import Services, UserScope, get_services, user_scope
from api.views.schemas import SaveArtifactRequest
from runtime.artifacts import ArtifactVersion
from runtime.errors import NotFoundError, UsageError

router = APIRouter(tags=["artifacts"])

BASE = "/apps/{app_name}/users/{user_id}/sessions/{session_id}/artifacts"
NAMED = BASE + "/{artifact_name:path}"


class ArtifactNotFoundError(NotFoundError):
    """Raised when an artifact (or the requested version of it) does not exist."""


class InvalidVersionError(UsageError):
    """Raised when a version in the path is neither a number nor ``latest``."""


def _where(scope: UserScope, session_id: str) -> dict[str, str]:
    return {"app_name": scope.app_name, "user_id": scope.user_id, "session_id": session_id}


def _version(version_id: str) -> int | None:
    if version_id == "latest":
        return None
    try:
        return int(version_id)
    except ValueError:
        raise InvalidVersionError(f"artifact version {version_id!r} is neither a number nor 'latest'") from None


def _missing(name: str, session_id: str, version: int | None) -> ArtifactNotFoundError:
    which = "" if version is None else f" version {version}"
    return ArtifactNotFoundError(f"artifact {name!r}{which} not found in session {session_id!r}")


async def _load(services: Services, scope: UserScope, session_id: str, name: str, version: int | None) -> dict:
    part = await services.artifact_service.load_artifact(**_where(scope, session_id), filename=name, version=version)
    if part is None:
        raise _missing(name, session_id, version)
    return part.model_dump(mode="json", by_alias=True, exclude_none=True)


def _metadata(version: ArtifactVersion) -> dict:
    return version.model_dump(mode="json", by_alias=True, exclude_none=True)


@router.get(BASE)
async def list_artifact_names(
    session_id: str, scope: UserScope = Depends(user_scope), services: Services = Depends(get_services)
) -> list[str]:
    """The artifact filenames visible to the session."""
    return await services.artifact_service.list_artifact_keys(**_where(scope, session_id))


@router.post(BASE)
async def save_artifact(
    session_id: str, body: SaveArtifactRequest,
    scope: UserScope = Depends(user_scope), services: Services = Depends(get_services),
):
    """Save a new version of ``filename`` and answer its metadata (version, canonicalUri, createTime...)."""
    where = _where(scope, session_id)
    version = await services.artifact_service.save_artifact(
        **where, filename=body.filename, artifact=body.artifact, custom_metadata=body.custom_metadata)
    saved = await services.artifact_service.get_artifact_version(**where, filename=body.filename, version=version)
    if saved is None:  # deleted between the two calls
        raise _missing(body.filename, session_id, version)
    return _metadata(saved)


@router.get(NAMED + "/versions/metadata")
async def list_artifact_versions_metadata(
    session_id: str, artifact_name: str,
    scope: UserScope = Depends(user_scope), services: Services = Depends(get_services),
) -> list[dict]:
    """The metadata of every version of an artifact, oldest first."""
    versions = await services.artifact_service.list_artifact_versions(
        **_where(scope, session_id), filename=artifact_name)
    return [_metadata(version) for version in versions]


@router.get(NAMED + "/versions/{version_id}/metadata")
async def get_artifact_version_metadata(
    session_id: str, artifact_name: str, version_id: str,
    scope: UserScope = Depends(user_scope), services: Services = Depends(get_services),
):
    """The metadata of one version (a number or ``latest``)."""
    version = _version(version_id)
    found = await services.artifact_service.get_artifact_version(
        **_where(scope, session_id), filename=artifact_name, version=version)
    if found is None:
        raise _missing(artifact_name, session_id, version)
    return _metadata(found)


@router.get(NAMED + "/versions/{version_id}")
async def load_artifact_version(
    session_id: str, artifact_name: str, version_id: str,
    scope: UserScope = Depends(user_scope), services: Services = Depends(get_services),
):
    """One version of an artifact (a number or ``latest``), as a genai Part."""
    return await _load(services, scope, session_id, artifact_name, _version(version_id))


@router.get(NAMED + "/versions")
async def list_artifact_versions(
    session_id: str, artifact_name: str,
    scope: UserScope = Depends(user_scope), services: Services = Depends(get_services),
) -> list[int]:
    """The version numbers of an artifact, ascending."""
    return await services.artifact_service.list_versions(**_where(scope, session_id), filename=artifact_name)


@router.get(NAMED)
async def load_artifact(
    session_id: str, artifact_name: str,
    version: int | None = Query(default=None, ge=0),
    scope: UserScope = Depends(user_scope), services: Services = Depends(get_services),
):
    """The latest version of an artifact (or ``?version=N``), as a genai Part."""
    return await _load(services, scope, session_id, artifact_name, version)


@router.delete(NAMED)
async def delete_artifact(
    session_id: str, artifact_name: str,
    scope: UserScope = Depends(user_scope), services: Services = Depends(get_services),
):
    """Delete every version of an artifact."""
    await services.artifact_service.delete_artifact(**_where(scope, session_id), filename=artifact_name)
    return None
