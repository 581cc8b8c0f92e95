"""ADK-compatible artifact routes under ``.../sessions/{session_id}/artifacts``."""

from __future__ import annotations

from fastapi import APIRouter, Depends, Query

from runtime.errors import NotFoundError

from ..deps import Services, UserScope, get_services, user_scope

router = APIRouter(tags=["artifacts"])

BASE = "/apps/{app_name}/users/{user_id}/sessions/{session_id}/artifacts"


class ArtifactNotFoundError(NotFoundError):
    """Raised when an artifact (or the requested version of it) does not exist."""


async def _load(services: Services, scope: UserScope, session_id: str, name: str, version: int | None) -> dict:
    part = await services.artifact_service.load_artifact(
        app_name=scope.app_name, user_id=scope.user_id, session_id=session_id, filename=name, version=version
    )
    if part is None:
        which = "" if version is None else f" version {version}"
        raise ArtifactNotFoundError(f"artifact {name!r}{which} not found in session {session_id!r}")
    return part.model_dump(mode="json", by_alias=True, exclude_none=True)


@router.get(BASE)
async def list_artifact_names(
    session_id: str, scope: UserScope = Depends(user_scope), services: Services = Depends(get_services)
) -> list[str]:
    """The artifact filenames visible to the session."""
    return await services.artifact_service.list_artifact_keys(
        app_name=scope.app_name, user_id=scope.user_id, session_id=session_id
    )


@router.get(BASE + "/{artifact_name}")
async def load_artifact(
    session_id: str,
    artifact_name: str,
    version: int | None = Query(default=None, ge=0),
    scope: UserScope = Depends(user_scope),
    services: Services = Depends(get_services),
):
    """The latest version of an artifact (or ``?version=N``), as a genai Part."""
    return await _load(services, scope, session_id, artifact_name, version)


@router.get(BASE + "/{artifact_name}/versions/{version_id}")
async def load_artifact_version(
    session_id: str,
    artifact_name: str,
    version_id: int,
    scope: UserScope = Depends(user_scope),
    services: Services = Depends(get_services),
):
    """One version of an artifact."""
    return await _load(services, scope, session_id, artifact_name, version_id)


@router.get(BASE + "/{artifact_name}/versions")
async def list_artifact_versions(
    session_id: str,
    artifact_name: str,
    scope: UserScope = Depends(user_scope),
    services: Services = Depends(get_services),
) -> list[int]:
    """The version numbers of an artifact, ascending."""
    return await services.artifact_service.list_versions(
        app_name=scope.app_name, user_id=scope.user_id, session_id=session_id, filename=artifact_name
    )


@router.delete(BASE + "/{artifact_name}")
async def delete_artifact(
    session_id: str,
    artifact_name: str,
    scope: UserScope = Depends(user_scope),
    services: Services = Depends(get_services),
):
    """Delete every version of an artifact."""
    await services.artifact_service.delete_artifact(
        app_name=scope.app_name, user_id=scope.user_id, session_id=session_id, filename=artifact_name
    )
    return None
