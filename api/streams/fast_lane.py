"""RunSseFastLane: POST /run_sse served without FastAPI's routing and dependency machinery on the happy path;
CreateSessionFastLane: the same for POST /apps/{app}/users/{user}/sessions, which a client calls before each run.

/run_sse is the latency-critical route (first event frame p50 <= 5 ms through the API). Matching ~30 routes
across included routers, solving five dependencies and opening FastAPI's exit stacks cost ~150 us a request
here: more than everything else the API does before the enqueue. This middleware serves a well-formed,
authorised request itself, through the same functions the route uses (``resolve_caller``, ``AgentRunRequest``,
``check_scope``, ``start_run_sse``). Anything else (another content type, a body that does not validate, a
refused key, an app or user out of scope) goes on to the FastAPI route with its body replayed, so every such
answer is the route's own by construction. Errors raised once the run is being started (unknown session,
Redis down) go through the app's own exception handlers, as they would from the route.
"""

from __future__ import annotations

import json
from typing import Any

from fastapi import FastAPI
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from api.access.auth import resolve_caller
from api.access.roles import route_rule
from api.deps import UserScope, check_scope
from api.routes import run, sessions
from api.routes.run import start_run_sse
from api.views.schemas import AgentRunRequest, CreateSessionRequest

PATH = "/run_sse"
SESSIONS = "/apps/{app_name}/users/{user_id}/sessions"


class RunSseFastLane:
    """Pure ASGI middleware: serve POST /run_sse directly when the request is one the route would accept."""

    def __init__(self, app: ASGIApp, *, api: FastAPI):
        self.app = app
        self.api = api
        # The route the request metrics label their samples with, as when the router matches it.
        self.route = next(route for route in run.router.routes if getattr(route, "path", None) == PATH)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "POST" or scope["path"] != PATH or scope.get("root_path"):
            await self.app(scope, receive, send)
            return
        messages = await _read_body(receive)
        accepted = self._accept(scope, b"".join(m.get("body", b"") for m in messages))
        if accepted is None:
            await self.app(scope, _replay(messages, receive), send)
            return
        caller, body = accepted
        state = self.api.state
        scope["route"] = self.route
        try:
            response = await start_run_sse(body, caller, state.settings, state.services, state.metrics)
        except Exception as exc:
            response = await self._handled(scope, exc)
        await response(scope, receive, send)

    def _accept(self, scope: Scope, raw: bytes) -> tuple[Any, AgentRunRequest] | None:
        """``(caller, body)`` when the route would accept this request as it is; None to let the route answer."""
        if not raw or not _is_json(scope):
            return None
        settings = self.api.state.settings
        try:
            caller = _admitted_caller(settings, scope, PATH)
            if caller is None:
                return None
            # Parsed then validated as Python data, as FastAPI does (pydantic's JSON mode differs in corners).
            body = AgentRunRequest.model_validate(json.loads(raw))
            check_scope(settings, caller, body.app_name, body.user_id)
            if any(part.function_response for part in (body.new_message.parts or [])):
                return None  # an answer to a parked call: the route applies the approval policy
        except Exception:  # refused, malformed or odd in any way: the route gives its own answer
            return None
        return caller, body

    async def _handled(self, scope: Scope, exc: Exception):
        return await _handled(self.api, scope, exc)


class CreateSessionFastLane:
    """Pure ASGI middleware: serve POST /apps/{app}/users/{user}/sessions directly when the route would accept
    the request as it is (no body, or a JSON body without seed events); anything else goes on to the route.

    FastAPI's routing, five dependencies and response encoding cost about as much as the session's creation
    itself; a client that opens a session per run pays them once per run. The session is made by the route's
    own function (``api.routes.sessions._create``) and answered with the JSON the route answers with."""

    def __init__(self, app: ASGIApp, *, api: FastAPI):
        self.app = app
        self.api = api
        self.route = next(route for route in sessions.router.routes
                          if getattr(route, "path", None) == SESSIONS and "POST" in getattr(route, "methods", ()))

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        where = _session_create_path(scope)
        if where is None:
            await self.app(scope, receive, send)
            return
        messages = await _read_body(receive)
        accepted = self._accept(scope, where, b"".join(m.get("body", b"") for m in messages))
        if accepted is None:
            await self.app(scope, _replay(messages, receive), send)
            return
        user_scope, body = accepted
        scope["route"] = self.route
        scope["path_params"] = {"app_name": user_scope.app_name, "user_id": user_scope.user_id}
        try:
            response = JSONResponse(await sessions._create(self.api.state.services, user_scope, body.session_id,
                                                           body.state, None))
        except Exception as exc:
            response = await _handled(self.api, scope, exc)
        await response(scope, receive, send)

    def _accept(self, scope: Scope, where: tuple[str, str], raw: bytes) -> tuple[UserScope, Any] | None:
        """``(scope, body)`` when the route would accept this request as it is; None to let the route answer."""
        if raw and not _is_json(scope):
            return None
        settings = self.api.state.settings
        try:
            caller = _admitted_caller(settings, scope, SESSIONS)
            if caller is None:
                return None
            body = CreateSessionRequest.model_validate(json.loads(raw)) if raw else CreateSessionRequest()
            if body.events:
                return None  # seeded history: the route appends the events
            check_scope(settings, caller, *where)
        except Exception:  # refused, malformed or odd in any way: the route gives its own answer
            return None
        return UserScope(app_name=where[0], user_id=where[1], caller=caller), body


def _admitted_caller(settings, scope: Scope, route: str):
    """The caller as the route resolves it (a refused key raises, as there), or None when its roles do not
    admit POST ``route``."""
    caller = resolve_caller(Request(scope), settings.keys, settings.oidc)
    return caller if caller.has_any(route_rule("POST", route)) else None


def _session_create_path(scope: Scope) -> tuple[str, str] | None:
    """``(app, user)`` of a POST to ``/apps/{app}/users/{user}/sessions``; None for any other request."""
    if scope["type"] != "http" or scope["method"] != "POST" or scope.get("root_path"):
        return None
    parts = scope["path"].split("/")
    if len(parts) != 6 or parts[0] or parts[1] != "apps" or parts[3] != "users" or parts[5] != "sessions":
        return None
    if not parts[2] or not parts[4]:
        return None
    return parts[2], parts[4]


async def _handled(api: FastAPI, scope: Scope, exc: Exception):
    """The app's own handler's response for ``exc``; anything without one propagates, as from the route.

    The catch-all ``Exception`` handler is left out on purpose: Starlette runs it in ServerErrorMiddleware,
    outside this one, which also re-raises so the server logs the error.
    """
    handlers = api.exception_handlers
    for cls in type(exc).__mro__:
        if cls is Exception:
            break
        if cls in handlers:
            return await handlers[cls](Request(scope), exc)
    raise exc


def _is_json(scope: Scope) -> bool:
    for name, value in scope["headers"]:
        if name == b"content-type":
            return value.split(b";", 1)[0].strip().lower() == b"application/json"
    return False


async def _read_body(receive: Receive) -> list[Message]:
    messages = []
    while True:
        message = await receive()
        messages.append(message)
        if message["type"] != "http.request" or not message.get("more_body", False):
            return messages


def _replay(messages: list[Message], receive: Receive) -> Receive:
    pending = list(messages)

    async def replay() -> Message:
        return pending.pop(0) if pending else await receive()

    return replay
