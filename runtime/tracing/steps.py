"""The model-call and tool-call spans the flows open and close (a no-op when the run is not traced)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from .recorder import EVENT_ID, OPERATION, Span, SpanRecorder, clip

if TYPE_CHECKING:
    from google.genai import types

    from ..contexts.invocation_context import InvocationContext
    from ..events import Event
    from ..tools.base_tool import BaseTool


def model_call_started(ctx: InvocationContext, model: str, event_id: str) -> Span | None:
    """The ``call_llm`` span of one model call, under the agent's span; its event id links it to the answer."""
    spans = ctx.run.spans
    if spans is None:
        return None
    return spans.start("call_llm", ctx.span, **{"gen_ai.system": "gcp.vertex.agent", "gen_ai.request.model": model,
                                               EVENT_ID: event_id, "gen_ai.agent.name": ctx.agent.name})


def model_call_ended(span: Span | None, event: Event | None) -> None:
    """Close the model call's span with what it answered (finish reason, token counts, the content, cut);
    once: a span already closed is left as it is."""
    if span is None or span.end_time is not None:
        return
    attributes: dict[str, Any] = {}
    if event is not None:
        if event.finish_reason is not None:
            attributes["gen_ai.response.finish_reasons"] = str(getattr(event.finish_reason, "value",
                                                                       event.finish_reason))
        usage = event.usage_metadata
        if usage is not None:
            if usage.prompt_token_count is not None:
                attributes["gen_ai.usage.input_tokens"] = usage.prompt_token_count
            if usage.candidates_token_count is not None:
                attributes["gen_ai.usage.output_tokens"] = usage.candidates_token_count
        if event.content is not None:
            attributes["gcp.vertex.agent.llm_response"] = clip(event.content.model_dump_json(exclude_none=True))
        if event.error_code:
            attributes["error.type"] = str(event.error_code)
    SpanRecorder.end(span, **attributes)


def tool_call_started(ctx: InvocationContext, call: types.FunctionCall, tool: BaseTool | None = None) -> Span | None:
    """The ``execute_tool {name}`` span of one tool call, under the agent's span (``tool``: its description
    and type, as google-adk names them)."""
    spans = ctx.run.spans
    if spans is None:
        return None
    described = {} if tool is None else {"gen_ai.tool.description": tool.description or "",
                                         "gen_ai.tool.type": type(tool).__name__}
    return spans.start(f"execute_tool {call.name}", ctx.span, **{
        OPERATION: "execute_tool", "gen_ai.tool.name": call.name or "", "gen_ai.tool.call.id": call.id or "",
        **described, "gen_ai.agent.name": ctx.agent.name,
        "gcp.vertex.agent.tool_call_args": clip(_json(call.args or {}))})


def tool_call_ended(span: Span | None, response: Any = None, error: Exception | None = None) -> None:
    """Close the tool call's span with its result (cut) or the error it raised."""
    if span is None:
        return
    if error is not None:
        attributes = {"error.type": type(error).__name__, "error.message": clip(str(error))}
    else:
        attributes = {"gcp.vertex.agent.tool_response": clip(_json(response))}
    SpanRecorder.end(span, **attributes)


def _json(value: Any) -> str:
    return json.dumps(value, default=str, separators=(",", ":"))
