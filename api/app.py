"""create_app: the FastAPI app, its routers, error handlers, size limit and metrics."""

from __future__ import annotations

import contextlib
import logging
from typing import Any

from fastapi import Depends, FastAPI, Request
from fastapi.middleware.cors import CORSMiddleware

from api.access.auth import NotLoopbackError, is_loopback
from api.access.limits import BodyLimits
from api.access.ops_access import OpsRouteGuard, ops_paths
from api.access.web_edge import EdgeSettings, WebEdge
from api.deps import Services, fresh_served_apps
from api.errors import install_error_handlers
from api.routes import (
    adk_dev,
    artifacts,
    audit,
    inbox,
    invocation_list,
    invocations,
    me,
    oauth,
    ops,
    overview,
    run,
    schedules,
    sessions,
    streams,
    webhooks,
)
from api.routes.dev_ui import mount_dev_ui
from api.routes.ui import mount_ui
from api.settings import ApiSettings
from api.streams.fast_lane import CreateSessionFastLane, RunSseFastLane
from api.tracing import TraceContext
from api.views.metrics import Metrics, RequestMetrics, StatsProvider
from runtime import __version__

log = logging.getLogger("agentq.api")


async def loopback_guard(request: Request) -> None:
    """With no keys configured, refuse every client that is not on the loopback interface."""
    if request.app.state.settings.auth_enabled:
        return
    host = request.client.host if request.client else None
    if not is_loopback(host):
        raise NotLoopbackError(f"no API keys are configured, so only loopback clients are served (client {host!r})")


def create_app(
    settings: ApiSettings,
    services: Services,
    *,
    stats_provider: StatsProvider | None = None,
    on_shutdown: Any = None,
    fast_lane: bool = True,
    edge: EdgeSettings | None = None,
) -> FastAPI:
    """The FastAPI app with its routers, error handlers, body-size limit and request metrics.

    ``on_shutdown``: an async callable run when the app stops (closes the services' connections).
    ``fast_lane``: serve well-formed POST /run_sse requests without FastAPI's routing (``api.streams.fast_lane``);
    off, every request goes through the routes (the tests compare the two).
    ``edge``: forwarded headers, the Host allow-list and the page headers (``api.access.web_edge``; default: no trusted
    proxy, localhost names only).
    """
    edge = edge or EdgeSettings()

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI):
        if settings.auth_enabled:
            log.info("agentq api: %d bearer key(s) configured", len(settings.keys))
            if settings.oidc is not None:
                log.info("agentq api: OIDC bearer tokens of issuer %r accepted", settings.oidc.settings.issuer)
        else:
            log.warning("agentq api: no API keys configured; serving loopback clients only")
        served = settings.served
        log.info("agentq api: serving apps %s", "(any)" if served.serves_any else ", ".join(
            [*served.configured, *(["every app an alive worker announces"] if served.follow_workers else [])]))
        yield
        if on_shutdown is not None:
            await on_shutdown()

    app = FastAPI(
        title="agentq",
        version=__version__,
        description="Durable background agents: ADK-compatible sessions and runs, queue routes, SSE.",
        lifespan=lifespan,
        dependencies=[Depends(loopback_guard), Depends(fresh_served_apps)],
    )
    app.state.settings = settings
    app.state.services = services
    app.state.metrics = Metrics()
    app.state.stats_provider = stats_provider
    install_error_handlers(app)
    for module in (ops, me, sessions, artifacts, invocations, audit, streams, run, inbox, overview, webhooks,
                   schedules, oauth, invocation_list):
        app.include_router(module.router)
    app.include_router(adk_dev.router)  # last: its /dev/{path} catch-all answers unserved ADK features 404
    mount_ui(app)
    if settings.dev_ui_dir:
        mount_dev_ui(app, settings.dev_ui_dir)
    # Added last runs first: metrics see every answer, including the size limit's 413; the fast lane sees
    # only bodies within the limit.
    if fast_lane:
        app.add_middleware(RunSseFastLane, api=app)
        app.add_middleware(CreateSessionFastLane, api=app)
    app.add_middleware(OpsRouteGuard, settings=settings, paths=ops_paths(app))
    # Every body is read (in time), measured and depth-checked here before anything parses it.
    app.add_middleware(BodyLimits, max_bytes=settings.max_body_bytes, read_timeout_s=settings.connection.body_timeout_s)
    app.add_middleware(RequestMetrics, metrics=app.state.metrics)
    if settings.cors_origins:  # outermost: preflights are answered before any other check
        app.add_middleware(CORSMiddleware, allow_origins=settings.cors_origins, allow_methods=["*"],
                           allow_headers=["*"], expose_headers=["X-Invocation-Id", "X-Next-Page-Token"])
    # Outermost of all: the client address is settled (forwarded headers from trusted proxies only) and the
    # Host checked before anything else reads them.
    app.state.edge = edge
    app.add_middleware(WebEdge, settings=edge, check_host=not settings.auth_enabled or bool(edge.allowed_hosts))
    # Outside even that: the caller's trace context, made current for the doors to store (api.tracing).
    app.add_middleware(TraceContext)
    return app
