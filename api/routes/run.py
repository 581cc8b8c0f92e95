"""ADK's POST /run and POST /run_sse, served through the queue: a worker runs the agent, never this process."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator
from typing import Any

from fastapi import APIRouter, Depends

from api import doors
from api.access.auth import Caller
from api.deps import Services, check_scope, get_caller, get_services, get_settings
from api.routes.invocations import queue_of
from api.run_start import RunStart, start_run
from api.settings import ApiSettings
from api.streams.event_stream import EventStreamResponse
from api.streams.sse import entry_json, frame
from api.views.metrics import Metrics, get_metrics
from api.views.schemas import AgentRunRequest
from runtime.errors import RunError

router = APIRouter(tags=["run"])


class InvocationFailedError(RunError):
    """Raised when the invocation behind a POST /run failed or was cancelled."""


class RunTimeoutError(RunError, TimeoutError):
    """Raised when POST /run waited longer than ``run_timeout_s`` for its invocation to settle."""


def failure_message(status: dict[str, Any]) -> str | None:
    """The error text of a failed or cancelled status entry (``{status, detail}``), None for any other."""
    if status.get("status") not in ("failed", "cancelled"):
        return None
    detail = status.get("detail") or {}
    error = detail.get("error") or detail.get("reason") or detail.get("message")
    if isinstance(error, dict):
        error = error.get("message") or error.get("type")
    return str(error) if error else f"invocation {status['status']}"


def is_user_input(event: dict[str, Any]) -> bool:
    """The committed user message (or human function response): ADK's runner does not yield it back."""
    return event.get("author") == "user"


async def _start(body: AgentRunRequest, caller: Caller, settings: ApiSettings, services: Services) -> RunStart:
    """Check the caller may touch the session, then enqueue, resume or follow (see ``api.run_start``): a new
    message goes through the enqueue door, an answer through the answer door."""
    check_scope(settings, caller, body.app_name, body.user_id)
    queue = queue_of(services)
    guards = doors.Guards.of(settings)

    async def enqueue(request: AgentRunRequest) -> str:
        return await doors.enqueue(
            caller, guards, queue, app_name=request.app_name, user_id=request.user_id,
            session_id=request.session_id, new_message=request.new_message, state_delta=request.state_delta,
            run_config={"streaming_mode": "sse"} if request.streaming else None,
            strategy=request.multitask_strategy)

    async def respond(owner: str, responses: list[dict], state_delta: dict | None = None) -> bool:
        outcome = await doors.answer(caller, guards, queue, owner, responses, state_delta=state_delta)
        return outcome.stored

    return await start_run(body, queue, services.session_service, enqueue=enqueue, respond=respond)


@router.post("/run")
async def run(
    body: AgentRunRequest,
    caller: Caller = Depends(get_caller),
    settings: ApiSettings = Depends(get_settings),
    services: Services = Depends(get_services),
    metrics: Metrics = Depends(get_metrics),
) -> list[dict[str, Any]]:
    """Run the agent on a new message and answer with the committed events once the invocation settles."""
    started = time.perf_counter()
    start = await _start(body, caller, settings, services)
    invocation_id, after = start.invocation_id, start.after
    events: list[dict[str, Any]] = []
    if start.idle:
        return events
    try:
        async with asyncio.timeout(settings.run_timeout_s):
            async for entry in queue_of(services).events(invocation_id, after=after):
                if entry.kind == "status":
                    failure = failure_message(entry.data)
                    if failure is not None:
                        raise InvocationFailedError(f"invocation {invocation_id!r} ended: {failure}")
                    continue
                event = json.loads(entry_json(entry.data))
                if event.get("partial") or is_user_input(event):
                    continue
                if not events:
                    metrics.first_frame.observe(time.perf_counter() - started)
                events.append(event)
    except TimeoutError:
        raise RunTimeoutError(
            f"invocation {invocation_id!r} did not settle within {settings.run_timeout_s}s; "
            f"follow it at /invocations/{invocation_id}/events"
        ) from None
    return events


async def adk_frames(
    invocation_id: str, after: str | None, services: Services, metrics: Metrics, started: float
) -> AsyncIterator[bytes]:
    """ADK's /run_sse frames: ``data: <event json>`` per event, ``data: {"error": ...}`` if the run fails."""
    first = True
    try:
        async for entry in queue_of(services).events(invocation_id, after=after):
            if entry.kind == "status":
                failure = failure_message(entry.data)
                if failure is not None:
                    yield frame(json.dumps({"error": failure}))
                continue
            if is_user_input(entry.data):
                continue
            if first:
                metrics.first_frame.observe(time.perf_counter() - started)
                first = False
            metrics.streamed.labels(kind="event").inc()
            yield frame(entry_json(entry.data))
    except Exception as exc:
        yield frame(json.dumps({"error": str(exc) or type(exc).__name__}))


async def start_run_sse(
    body: AgentRunRequest, caller: Caller, settings: ApiSettings, services: Services, metrics: Metrics
) -> EventStreamResponse:
    """Start the run and answer with its SSE stream (the route below and the fast lane in ``api.streams.fast_lane``)."""
    started = time.perf_counter()
    start = await _start(body, caller, settings, services)
    frames = _no_frames() if start.idle else adk_frames(start.invocation_id, start.after, services, metrics, started)
    return EventStreamResponse(
        frames, keepalive_s=settings.sse_keepalive_s, headers={"X-Invocation-Id": start.invocation_id}
    )


async def _no_frames() -> AsyncIterator[bytes]:
    return
    yield  # an async generator that ends at once


@router.post("/run_sse")
async def run_sse(
    body: AgentRunRequest,
    caller: Caller = Depends(get_caller),
    settings: ApiSettings = Depends(get_settings),
    services: Services = Depends(get_services),
    metrics: Metrics = Depends(get_metrics),
):
    """Run the agent and stream its events as ADK SSE frames (partial chunks too when ``streaming``).

    A well-formed, authorised request is normally served by ``api.streams.fast_lane`` without reaching this function;
    it behaves exactly as this route does.
    """
    return await start_run_sse(body, caller, settings, services, metrics)
