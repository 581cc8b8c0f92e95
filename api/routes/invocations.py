"""Queue routes: enqueue, invocation status, function responses, cancel, and the approval inbox."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Body, Depends, Query

from api import doors
from api.access.approval_policy import mark_answerable
from api.access.auth import Caller
from api.deps import Services, UserScope, get_caller, get_services, get_settings, user_scope
from api.settings import ApiSettings
from api.views.metrics import Metrics, get_metrics
from api.views.schemas import (
    CancelRequest,
    EnqueueRequest,
    EnqueueResponse,
    FunctionResponsesRequest,
    InvocationList,
    InvocationOut,
)
from api.views.worker_presence import log_if_unserved, waiting_notice
from api.views.workflow_nodes import WorkflowNodesOut, node_runs
from runtime.errors import RetryableError
from runtime.sessions import GetSessionConfig
from runtime.statuses import InvocationStatus

router = APIRouter(tags=["invocations"])
CLOCK_SLACK_S = 60.0  # an event's timestamp comes from a worker's clock, the record's from another process's


class QueueUnavailableError(RetryableError):
    """Raised when a queue route is called on an API started without a Redis-backed queue."""


def queue_of(services: Services) -> Any:
    """The AgentqClient, or 503 when this API has none."""
    if services.queue is None:
        raise QueueUnavailableError("this API has no invocation queue configured (no Redis URL)")
    return services.queue


async def visible_record(services: Services, settings: ApiSettings, caller: Caller, invocation_id: str):
    """The invocation's record if the caller may see it; otherwise the same 404 as an unknown id."""
    return await doors.visible_record(queue_of(services), doors.Guards.of(settings), caller, invocation_id)


def run_config_dict(body: EnqueueRequest) -> dict[str, Any] | None:
    """The run config the worker receives (RunConfig's field values; streaming_mode NONE is the default)."""
    config: dict[str, Any] = {}
    if body.run_config is not None:
        if body.run_config.streaming_mode is not None and body.run_config.streaming_mode.lower() == "sse":
            config["streaming_mode"] = "sse"
        if body.run_config.max_llm_calls is not None:
            config["max_llm_calls"] = body.run_config.max_llm_calls
    return config or None


@router.post("/apps/{app_name}/users/{user_id}/sessions/{session_id}/invocations", status_code=202)
async def enqueue(
    session_id: str,
    body: EnqueueRequest,
    scope: UserScope = Depends(user_scope),
    services: Services = Depends(get_services),
    metrics: Metrics = Depends(get_metrics),
    settings: ApiSettings = Depends(get_settings),
) -> EnqueueResponse:
    """Start an invocation in the background; 202 with its id and where to follow it. 400 for a ``webhook``
    the SSRF rule refuses; 429 (``Retry-After``) past a rate limit or in-flight quota (``api.access.rate_limits``);
    409 when ``multitaskStrategy`` is ``reject`` and the session has an invocation in flight (or a ``rollback``
    would take back another invocation's events)."""
    invocation_id = await doors.enqueue(
        scope.caller, doors.Guards.of(settings), queue_of(services), app_name=scope.app_name, user_id=scope.user_id,
        session_id=session_id, new_message=body.new_message, state_delta=body.state_delta,
        run_config=run_config_dict(body), park_timeout=body.park_timeout, webhook=body.webhook,
        strategy=body.multitask_strategy)
    metrics.enqueued.inc()
    await log_if_unserved(services.queue, scope.app_name, invocation_id)
    return EnqueueResponse(
        invocation_id=invocation_id,
        events_url=f"/invocations/{invocation_id}/events",
        status_url=f"/invocations/{invocation_id}",
    )


@router.get("/invocations/{invocation_id}")
async def get_invocation(
    invocation_id: str,
    caller: Caller = Depends(get_caller),
    settings: ApiSettings = Depends(get_settings),
    services: Services = Depends(get_services),
) -> InvocationOut:
    """Where the invocation stands: status, pending long-running calls (id, name, args), error; ``notice``
    when it is queued and no alive worker serves its app."""
    record = await visible_record(services, settings, caller, invocation_id)
    view = mark_answerable(InvocationOut.from_record(record), record, caller, settings.policies())
    view.notice = await waiting_notice(services.queue, record.app_name, record.status)
    return view


@router.get("/invocations/{invocation_id}/nodes")
async def get_invocation_nodes(
    invocation_id: str,
    caller: Caller = Depends(get_caller),
    settings: ApiSettings = Depends(get_settings),
    services: Services = Depends(get_services),
) -> WorkflowNodesOut:
    """A workflow invocation's node runs and where each stands (done, running, waiting, failed, retrying,
    stopped), read from its committed events (api.views.workflow_nodes); a plain agent's invocation lists its agents' runs, since ADK 2 gives every agent run a node path (``weather@1``,
    ``desk@1/billing@1``) as it gives a workflow's nodes."""
    record = await visible_record(services, settings, caller, invocation_id)
    since = GetSessionConfig(after_timestamp=record.created_at - CLOCK_SLACK_S) if record.created_at else None
    session = await services.session_service.get_session(
        app_name=record.app_name, user_id=record.user_id, session_id=record.session_id, config=since)
    events = [event for event in session.events if event.invocation_id == record.id] if session else []
    return WorkflowNodesOut(invocation_id=record.id, status=record.status, nodes=node_runs(events, record.status))


@router.post("/invocations/{invocation_id}/function-responses", status_code=202)
async def function_responses(
    invocation_id: str,
    body: FunctionResponsesRequest,
    caller: Caller = Depends(get_caller),
    settings: ApiSettings = Depends(get_settings),
    services: Services = Depends(get_services),
    metrics: Metrics = Depends(get_metrics),
) -> InvocationOut:
    """Answer pending long-running calls; 202 and the invocation is ``queued`` again. 409: call not pending.
    403 naming the approval rule that keeps the caller from answering (``api.access.approval_policy``); an approval
    below its confirmation's quorum is recorded and the invocation stays ``parked``."""
    responses = [item.model_dump(exclude_none=True) for item in body.function_responses]
    outcome = await doors.answer(caller, doors.Guards.of(settings), queue_of(services), invocation_id, responses)
    metrics.responded.inc()
    return InvocationOut.from_record(outcome.record)


@router.post("/invocations/{invocation_id}/cancel")
async def cancel(
    invocation_id: str,
    body: CancelRequest | None = Body(default=None),
    caller: Caller = Depends(get_caller),
    settings: ApiSettings = Depends(get_settings),
    services: Services = Depends(get_services),
) -> InvocationOut:
    """Cancel a queued, running or parked invocation (a running one stops before its next commit)."""
    reason = (body or CancelRequest()).reason
    return InvocationOut.from_record(
        await doors.cancel(caller, doors.Guards.of(settings), queue_of(services), invocation_id, reason))


@router.get("/apps/{app_name}/users/{user_id}/invocations")
async def list_invocations(
    status: InvocationStatus | None = Query(default=None),
    session_id: str | None = Query(default=None, alias="sessionId", max_length=256),
    limit: int = Query(default=100, ge=1, le=1000, description="page size"),
    page_token: str | None = Query(default=None, alias="pageToken", max_length=2000),
    scope: UserScope = Depends(user_scope),
    services: Services = Depends(get_services),
    settings: ApiSettings = Depends(get_settings),
) -> InvocationList:
    """A page of the user's invocations, newest first; ``?status=parked`` is the approval inbox.

    ``nextPageToken`` (null on the last page) goes back as ``pageToken``. A page filtered by another status or
    by session may hold fewer than ``limit`` and still have a next one."""
    page = await queue_of(services).invocations_page(
        scope.app_name, scope.user_id, status, session_id=session_id, page_size=limit, page_token=page_token
    )
    return InvocationList(invocations=[mark_answerable(InvocationOut.from_record(record), record, scope.caller,
                                                       settings.policies()) for record in page.items],
                          next_page_token=page.next_page_token)

