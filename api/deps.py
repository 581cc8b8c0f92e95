"""Request dependencies: the services, the caller, and the app/user scope checks every route shares."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from fastapi import Depends, Request

from api.access.auth import Caller, resolve_caller
from api.access.roles import check_route_roles
from api.settings import ApiSettings
from runtime.artifacts import BaseArtifactService
from runtime.errors import NotFoundError
from runtime.sessions import BaseSessionService


@dataclass(kw_only=True)
class Services:
    """What the routes talk to. ``queue`` is a worker.client.AgentqClient, the one way to Redis: every read and
    write beyond the two services goes through it (None: in-process, without Redis; queue routes answer 503)."""

    session_service: BaseSessionService
    artifact_service: BaseArtifactService
    queue: Any = None


async def get_settings(request: Request) -> ApiSettings:
    """The app's settings."""
    return request.app.state.settings


async def get_services(request: Request) -> Services:
    """The app's services."""
    return request.app.state.services


async def fresh_served_apps(request: Request) -> None:
    """Every request: the served apps read again when the set is stale (``api.served_apps``; the route's
    ``app_name`` decides how stale), so the checks after it see the workers alive now."""
    await request.app.state.settings.served.refresh(request.app.state.services.queue,
                                                    request.path_params.get("app_name"))


async def get_caller(request: Request) -> Caller:
    """The authenticated caller (401 without a valid key or token; loopback-only when no auth is configured),
    refused with 403 when its roles do not include one the route needs (``api.access.roles``)."""
    settings = request.app.state.settings
    caller = resolve_caller(request, settings.keys, settings.oidc)
    check_route_roles(caller, request)
    return caller


@dataclass(frozen=True, kw_only=True)
class UserScope:
    """An (app, user) pair the caller may touch, in an app this API serves."""

    app_name: str
    user_id: str
    caller: Caller


def check_scope(settings: ApiSettings, caller: Caller, app_name: str, user_id: str) -> None:
    """404 when the app is not served or the caller may not touch this user (indistinguishable on purpose)."""
    settings.served.check(app_name)
    if not caller.allows(app_name, user_id):
        raise NotFoundError(f"app {app_name!r} has no user {user_id!r} visible to this key")


async def user_scope(
    app_name: str,
    user_id: str,
    caller: Caller = Depends(get_caller),
    settings: ApiSettings = Depends(get_settings),
) -> UserScope:
    """Dependency for every ``/apps/{app_name}/users/{user_id}/...`` route (async: sync ones run in a thread)."""
    check_scope(settings, caller, app_name, user_id)
    return UserScope(app_name=app_name, user_id=user_id, caller=caller)
