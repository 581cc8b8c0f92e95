"""RunSseFastLane: POST /run_sse served without FastAPI's routing and dependency machinery on the happy path.

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
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from api.access.auth import resolve_caller
from api.access.roles import route_rule
from api.deps import check_scope
from api.routes import run
from api.routes.run import start_run_sse
from api.views.schemas import AgentRunRequest

PATH = "/run_sse"


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
            caller = resolve_caller(Request(scope), settings.keys, settings.oidc)
            if not caller.has_any(route_rule("POST", PATH)):
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
        """The app's own handler's response for ``exc``; anything without one propagates, as from the route.

        The catch-all ``Exception`` handler is left out on purpose: Starlette runs it in ServerErrorMiddleware,
        outside this one, which also re-raises so the server logs the error.
        """
        handlers = self.api.exception_handlers
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
