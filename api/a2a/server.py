"""``agentq api --a2a APP``: an app served as an A2A agent (the a2a-sdk's JSON-RPC routes and agent card).

Per app: ``POST /a2a/{app}`` takes A2A JSON-RPC (``SendMessage``/``SendStreamingMessage``/``GetTask``/
``CancelTask``/``ListTasks``, and A2A 0.3's ``message/send``, ``message/stream``, ``tasks/get``, ``tasks/cancel``),
and ``GET /a2a/{app}/.well-known/agent-card.json`` answers the agent card (the root agent's name and
description, one skill per tool). Callers authenticate as on every other route (bearer keys or OIDC tokens; with
auth off, loopback clients only); the A2A user is the caller's principal, which the key must allow in the app.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from a2a.server.agent_execution import SimpleRequestContextBuilder
from a2a.server.context import ServerCallContext
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.routes import DefaultServerCallContextBuilder, create_agent_card_routes, create_jsonrpc_routes
from a2a.types import AgentCapabilities, AgentCard, AgentInterface, AgentSkill
from starlette.requests import Request

from api import doors
from api.a2a.executor import CALLER, AgentqExecutor, InvocationIds, caller_of
from api.a2a.task_store import RedisTaskStore
from api.access.auth import NotLoopbackError, is_loopback, resolve_caller
from api.access.roles import READ_OR_ANSWER
from runtime.errors import NotFoundError


class CallerContext(DefaultServerCallContextBuilder):
    """Authenticates each A2A request as agentq's routes do, and refuses a caller the app is not open to."""

    def __init__(self, settings: Any, app: str):
        self.settings = settings
        self.app = app

    def build(self, request: Request) -> ServerCallContext:
        if not self.settings.auth_enabled:
            host = request.client.host if request.client else None
            if not is_loopback(host):
                raise NotLoopbackError(f"no API keys are configured, so only loopback clients are served "
                                       f"(client {host!r})")
        caller = resolve_caller(request, self.settings.keys, self.settings.oidc)
        if not caller.allows(self.app, caller.principal_id):
            raise NotFoundError(f"app {self.app!r} is not served over A2A to principal {caller.principal_id!r}")
        context = super().build(request)
        context.state[CALLER] = caller
        return context


class GuardedRequestHandler(DefaultRequestHandler):
    """The SDK's handler, with reading tasks needing role ``read`` or ``answer`` (as ``GET /invocations/{id}``);
    which tasks a caller sees at all is the task store's scope (``RedisTaskStore``). A message the doors would
    refuse is refused before the SDK takes it (``AgentqExecutor.admit``): the SDK fails a task whose execution
    raises, so a refused answer would otherwise end the task it tried to answer."""

    async def on_message_send(self, params: Any, context: ServerCallContext) -> Any:
        await self.agent_executor.admit(caller_of(context), params.message)
        return await super().on_message_send(params, context)

    async def on_message_send_stream(self, params: Any, context: ServerCallContext) -> AsyncIterator[Any]:
        await self.agent_executor.admit(caller_of(context), params.message)
        async for event in super().on_message_send_stream(params, context):
            yield event

    async def on_get_task(self, params: Any, context: ServerCallContext) -> Any:
        _check_reads(context)
        return await super().on_get_task(params, context)

    async def on_list_tasks(self, params: Any, context: ServerCallContext) -> Any:
        _check_reads(context)
        return await super().on_list_tasks(params, context)


def _check_reads(context: ServerCallContext) -> None:
    from a2a.utils.errors import InvalidRequestError

    caller = caller_of(context)
    if caller is not None and not caller.has_any(READ_OR_ANSWER):
        raise InvalidRequestError(message=f"Permission denied: reading tasks needs role 'read' or 'answer'; "
                                          f"principal {caller.principal_id!r} has roles {list(caller.roles)!r}")


def agent_card(app_name: str, agent: Any, base_url: str) -> AgentCard:
    """The A2A card of an app: its root agent's description, one skill per tool, streaming on."""
    tools = getattr(agent, "tools", None) or []
    skills = [AgentSkill(id=name, name=name, description=description or name, tags=["tool"])
              for name, description in _tool_texts(tools)]
    if not skills:
        skills = [AgentSkill(id=app_name, name=app_name, description=agent.description or app_name, tags=["agent"])]
    return AgentCard(
        name=app_name, description=getattr(agent, "description", "") or f"agentq app {app_name}", version="1",
        supported_interfaces=[AgentInterface(url=f"{base_url}/a2a/{app_name}", protocol_binding="JSONRPC",
                                             protocol_version="1.0")],
        capabilities=AgentCapabilities(streaming=True), default_input_modes=["text/plain", "application/json"],
        default_output_modes=["text/plain", "application/json"], skills=skills)


def _tool_texts(tools: list) -> list[tuple[str, str]]:
    found = []
    for tool in tools:
        name = getattr(tool, "name", None) or getattr(tool, "__name__", None)
        description = getattr(tool, "description", None) or (getattr(tool, "__doc__", None) or "").strip()
        if name:
            found.append((name, description.splitlines()[0] if description else ""))
    return found


def mount_a2a(app: Any, settings: Any, services: Any, apps: dict[str, Any], base_url: str) -> None:
    """Add the A2A routes of every app in ``apps`` (name -> root agent) to the FastAPI ``app``."""

    guards = doors.Guards.of(settings)
    for name, agent in apps.items():
        card = agent_card(name, agent, base_url)
        handler = GuardedRequestHandler(
            agent_executor=AgentqExecutor(services.queue, services.session_service, name, guards),
            task_store=RedisTaskStore(services.queue, name), agent_card=card,
            request_context_builder=SimpleRequestContextBuilder(task_id_generator=InvocationIds()))
        for route in create_agent_card_routes(agent_card=card, card_url=f"/a2a/{name}/.well-known/agent-card.json"):
            app.router.routes.append(route)
        for route in create_jsonrpc_routes(handler, rpc_url=f"/a2a/{name}",
                                           context_builder=CallerContext(settings, name), enable_v0_3_compat=True):
            app.router.routes.append(route)
