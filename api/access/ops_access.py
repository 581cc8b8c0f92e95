"""OpsRouteGuard: who may read /health, /metrics and the API docs, decided before the request is routed.

The docs (``/docs``, ``/redoc``, ``/openapi.json``) are FastAPI's own routes, which no dependency reaches, so
the rule (``api.access.auth.check_ops_route``) is applied here, in one place for all of them.
"""

from __future__ import annotations

from fastapi import FastAPI
from starlette.requests import Request
from starlette.types import ASGIApp, Receive, Scope, Send

from api.access.auth import check_ops_route
from api.errors import error_response
from api.settings import ApiSettings
from runtime.errors import UsageError


def ops_paths(app: FastAPI) -> dict[str, str]:
    """Path -> operations route name, for ``app``'s ops and docs routes."""
    paths = {"/health": "health", "/metrics": "metrics"}
    for path in (app.docs_url, app.redoc_url, app.openapi_url, app.swagger_ui_oauth2_redirect_url):
        if path:
            paths[path] = "docs"
    return paths


class OpsRouteGuard:
    """Pure ASGI middleware: answer 401/403 for an operations route the caller may not read."""

    def __init__(self, app: ASGIApp, *, settings: ApiSettings, paths: dict[str, str]):
        self.app = app
        self.settings = settings
        self.paths = paths

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        route = self.paths.get(scope["path"]) if scope["type"] == "http" else None
        if route is not None:
            try:
                check_ops_route(Request(scope), self.settings.keys, self.settings.public_routes, route,
                                self.settings.oidc)
            except UsageError as exc:
                await error_response(exc)(scope, receive, send)
                return
        await self.app(scope, receive, send)
