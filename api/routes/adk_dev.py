"""The rest of what google-adk's dev UI asks of ADK's api server: ``/version``, ``/apps/{app}/app-info``, the
session trace view, the graph of a workflow with each node's state at an event (``api.views.workflow_graph``), and
a clear answer for the features agentq does not serve.

Evaluations, the agent builder, agent tests and live audio/video (``/run_live``) are ADK dev-server
features: agentq answers them 404 with a JSON body naming the feature (never a generic error), so a client
knows at once what is missing; 404, not 501, because no request to the API may get a 5xx (the fuzz test).
The UI carries on without them.
"""

from __future__ import annotations

import sys

from fastapi import APIRouter, Depends, Query, Request, WebSocket
from fastapi.responses import JSONResponse

from api.access.auth import Caller
from api.deps import Services, check_scope, get_caller, get_services, get_settings
from api.settings import ApiSettings
from api.views import workflow_graph
from api.views.app_info import name_only
from api.views.traces import session_spans
from api.views.workflow_nodes import node_runs
from runtime import __version__
from runtime.errors import AppNotFoundError, InvocationNotFoundError, NotFoundError

router = APIRouter(tags=["adk"])

UNSERVED = (  # first match wins: (path fragment, the feature's name)
    ("/builder", "the agent builder"),
    ("/eval", "evaluations (eval sets, eval runs and their results)"),
    ("/metrics-info", "evaluation metrics"),
    ("/tests", "agent tests"),
    ("/build_graph", "the agent builder's graph (the dev UI draws /dev/apps/{app}/build_graph_image)"),
    ("/debug/trace/", "per-event traces (use /dev/apps/{app}/debug/trace/session/{session_id})"),
)


class FeatureNotServedError(NotFoundError):
    """Raised (answered 404) for an ADK dev-server feature agentq does not serve."""


def not_served(feature: str, path: str) -> JSONResponse:
    """The 404 answer naming ``feature``."""
    detail = f"agentq does not serve {feature} ({path}): it is a google-adk dev server feature"
    return JSONResponse({"error": FeatureNotServedError.__name__, "detail": detail, "feature": feature},
                        status_code=404)


def _check_app(settings: ApiSettings, caller: Caller, app_name: str) -> None:
    settings.served.check(app_name)
    if not caller.allows_app(app_name):
        raise AppNotFoundError(f"app {app_name!r} is not served here")


@router.get("/version")
async def version() -> dict[str, str]:
    """agentq's version and the Python it runs on (ADK's shape)."""
    python = f"{sys.version_info.major}.{sys.version_info.minor}.{sys.version_info.micro}"
    return {"version": __version__, "language": "python", "language_version": python}


@router.get("/apps/{app_name}/app-info")
async def app_info(
    app_name: str, caller: Caller = Depends(get_caller), settings: ApiSettings = Depends(get_settings)
) -> dict:
    """ADK's AppInfo: the root agent and each LlmAgent's description, instruction, tools and sub-agents."""
    _check_app(settings, caller, app_name)
    return _described(settings, app_name)


def _described(settings: ApiSettings, app_name: str) -> dict:
    """The app's AppInfo: from ``--app module:attr``, else as its workers describe it, else its name only."""
    return settings.app_infos.get(app_name) or settings.served.info(app_name) or name_only(app_name)


@router.get("/dev/apps/{app_name}/build_graph_image")
async def graph_images(
    app_name: str,
    dark_mode: bool = Query(default=False),
    caller: Caller = Depends(get_caller),
    settings: ApiSettings = Depends(get_settings),
) -> dict[str, dict[str, str]]:
    """ADK's graph of the app: ``{path: {dotSrc}}``, the workflow (``""``) and each nested workflow, or an agent
    app's tree; the dev UI draws them and marks the nodes each event went through."""
    _check_app(settings, caller, app_name)
    return workflow_graph.graph_images(_described(settings, app_name), dark_mode=dark_mode)


@router.get("/dev/apps/{app_name}/users/{user_id}/sessions/{session_id}/events/{event_id}/graph")
async def event_graph(
    app_name: str,
    user_id: str,
    session_id: str,
    event_id: str,
    dark_mode: bool = Query(default=False),
    caller: Caller = Depends(get_caller),
    settings: ApiSettings = Depends(get_settings),
    services: Services = Depends(get_services),
) -> dict[str, str]:
    """The workflow's graph with each node's state once ``event_id`` was committed (done, running, waiting,
    failed, retrying, stopped), from the invocation's events; {} when there is no such event or no workflow (as
    ADK answers)."""
    _check_app(settings, caller, app_name)
    check_scope(settings, caller, app_name, user_id)
    graph = _described(settings, app_name).get("workflowGraph")
    session = await services.session_service.get_session(app_name=app_name, user_id=user_id, session_id=session_id)
    event = next((e for e in (session.events if session else []) if e.id == event_id), None)
    if graph is None or event is None:
        return {}
    events = [e for e in session.events if e.invocation_id == event.invocation_id]
    upto = events[:events.index(event) + 1]
    status = "running"
    if len(upto) == len(events) and services.queue is not None:  # the last event: the invocation's own status
        try:
            status = (await services.queue.get(event.invocation_id)).status
        except InvocationNotFoundError:  # settled long ago and dropped: its events still say what happened
            status = "completed"
    states = workflow_graph.states_at(node_runs(upto, status))
    return {"dotSrc": workflow_graph.workflow_dot(graph, states=states, dark_mode=dark_mode)}


@router.get("/config/telemetry")
async def telemetry_config() -> dict[str, bool]:
    """agentq reports no usage telemetry: nothing for the dev UI to ask consent for."""
    return {"telemetry": False}


@router.get("/dev/apps/{app_name}/debug/trace/session/{session_id}")
async def session_trace(
    app_name: str,
    session_id: str,
    user_id: str | None = Query(default=None, alias="userId", max_length=256),
    caller: Caller = Depends(get_caller),
    settings: ApiSettings = Depends(get_settings),
    services: Services = Depends(get_services),
) -> list[dict]:
    """The session's spans (agent runs, model calls, tool calls), one trace per invocation, in ADK's format.

    ADK's route names no user; ``?userId=`` may. Without it, the session is looked for among the users the
    caller may see. [] when nothing was recorded (or the session is unknown), as ADK answers.
    """
    _check_app(settings, caller, app_name)
    if user_id is not None:
        check_scope(settings, caller, app_name, user_id)
    return await session_spans(services, caller, app_name, session_id, user_id)


@router.api_route("/dev/{rest:path}", methods=["GET", "POST", "PUT", "PATCH", "DELETE"], include_in_schema=False)
async def dev_feature(rest: str, request: Request) -> JSONResponse:
    """Every other ``/dev/...`` route of ADK's dev server: 404 naming the feature."""
    for fragment, feature in UNSERVED:
        if fragment in "/" + rest:
            return not_served(feature, request.url.path)
    return not_served("this dev-server route", request.url.path)


@router.api_route("/run_live", methods=["GET", "POST"], include_in_schema=False)
async def run_live(request: Request) -> JSONResponse:
    """Live audio/video runs are not served (an HTTP request gets the 404 body naming them)."""
    return not_served("live audio/video runs", request.url.path)


@router.websocket("/run_live")
async def run_live_socket(websocket: WebSocket) -> None:
    """Live audio/video runs are not served: the socket is refused with the reason (policy violation)."""
    await websocket.close(code=1008, reason="agentq does not serve live audio/video runs (/run_live)")
