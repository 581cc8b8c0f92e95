"""The OpenTelemetry span of one run of an invocation on a worker (docs/observability.md).

A run's span (``invocation``, as google-adk names its root span) is a child of the trace context the invocation
was enqueued under (``InvocationRecord.traceparent``), so the first run and every run that resumes it after a
park share the caller's trace id, whichever worker runs them. A resuming run also links to the run that parked
(``run_span``, stored when that run settled) and to the answers' own trace contexts. The Runner's
``invoke_agent``, ``call_llm`` and ``execute_tool`` spans open under it (runtime.tracing.otel). Nothing is
opened while the process does not export spans.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from opentelemetry import context as otel_context
from opentelemetry import trace

from runtime.tracing import otel
from worker.records.record import InvocationRecord

INVOCATION_ID = "gcp.vertex.agent.invocation_id"


@contextmanager
def run_span(record: InvocationRecord, worker_name: str) -> Iterator[None]:
    """Open the run's span and make it current for the rest of this task (the Runner's spans go under it)."""
    if not otel.enabled():
        yield
        return
    # Without a caller's trace the first run starts one, and the runs after it stay in it (its run_span).
    parent = otel.context_of(record.traceparent) or otel.context_of(record.run_span) or otel_context.Context()
    links = _links(record)
    span = otel.tracer().start_span("invocation", context=parent, links=links, attributes={
        INVOCATION_ID: record.id, "gen_ai.conversation.id": record.session_id, "agentq.app": record.app_name,
        "agentq.user": record.user_id, "agentq.worker": worker_name, "agentq.attempt": record.attempts,
        "agentq.resumed": bool(record.responses)})
    token = otel.attach(trace.set_span_in_context(span, parent))
    try:
        yield
    finally:
        otel.detach(token)
        span.end()


def settled(status: str, detail: dict[str, Any] | None = None) -> None:
    """Mark the current run's span with how the run ended; a park is an event naming the calls it waits for."""
    if not otel.enabled():
        return
    span = trace.get_current_span()
    span.set_attribute("agentq.invocation.status", status)
    detail = detail or {}
    if status == "parked":
        calls = detail.get("pendingCalls") or []
        span.add_event("parked", {"agentq.pending_call_ids": [call.get("id", "") for call in calls],
                                  "agentq.pending_call_names": [call.get("name", "") for call in calls]})
    elif status == "failed":
        error = detail.get("error") or {}
        span.set_attribute("error.type", str(error.get("type", "")))
        span.set_status(trace.Status(trace.StatusCode.ERROR, str(error.get("message", ""))))


def _links(record: InvocationRecord) -> list[trace.Link]:
    """The run that parked (when this run resumes after answers) and the spans the answers were sent from."""
    links = []
    if record.responses:
        parked = otel.span_context_of(record.run_span)
        if parked is not None:
            links.append(trace.Link(parked, {"agentq.link": "parked run"}))
    for traceparent in record.answer_traceparents or ():
        answer = otel.span_context_of(traceparent)
        if answer is not None:
            links.append(trace.Link(answer, {"agentq.link": "answer"}))
    return links
