"""Turning what callers pass (Content or text or dicts) into the types the records store."""

from __future__ import annotations

import contextlib
from typing import Any

from google.genai import types

from runtime.errors import InvalidMessageError, UsageError
from runtime.events.tool_confirmation import REQUEST_CONFIRMATION_FUNCTION_CALL_NAME, ToolConfirmation


def to_content(message: Any) -> types.Content:
    """A user message from a Content, its dict, or plain text. Raises InvalidMessageError."""
    if isinstance(message, str):
        message = types.Content(role="user", parts=[types.Part(text=message)])
    elif isinstance(message, dict):
        try:
            message = types.Content.model_validate(message)
        except ValueError as exc:
            raise InvalidMessageError(f"new_message is not a Content: {exc}") from None
    if not isinstance(message, types.Content) or not message.parts:
        raise InvalidMessageError("new_message must be a Content with at least one part")
    if any(part.function_call for part in message.parts):
        raise InvalidMessageError("new_message may not carry a function call")
    return message.model_copy(update={"role": message.role or "user"})


def to_function_response(item: Any) -> types.FunctionResponse:
    """A FunctionResponse from itself or its dict; the id is required. Raises UsageError."""
    if isinstance(item, dict):
        try:
            item = types.FunctionResponse.model_validate(item)
        except ValueError as exc:
            raise UsageError(f"not a function response: {exc}") from None
    if not isinstance(item, types.FunctionResponse) or not item.id:
        raise UsageError(f"a function response needs an id: {item!r}")
    if _looks_like_confirmation(item):
        try:
            ToolConfirmation.from_response_dict(item.response or {})
        except ValueError as exc:
            raise UsageError(
                f"the answer to confirmation {item.id!r} must be {{\"confirmed\": true|false, \"payload\": ...}}: {exc}"
            ) from None
    return item.model_copy()


def _looks_like_confirmation(response: types.FunctionResponse) -> bool:
    """Named as a confirmation answer, or nameless and shaped like one (the store checks the pending call's name,
    and a nameless answer to a confirmation without a boolean 'confirmed' is refused there)."""
    if response.name:
        return response.name == REQUEST_CONFIRMATION_FUNCTION_CALL_NAME
    return isinstance(response.response, dict) and "confirmed" in response.response


def run_config_dict(run_config: Any) -> dict | None:
    """A RunConfig (or its dict) as the dict the record stores."""
    if run_config is None:
        return None
    if isinstance(run_config, dict):
        return run_config
    with contextlib.suppress(AttributeError):
        return run_config.model_dump(mode="json", exclude_none=True)
    raise UsageError(f"run_config must be a RunConfig or a dict, not {type(run_config).__name__!r}")


STATE_DELTA_KEY = "agentqStateDelta"
"""Key of a stored function response (its ``r:<seq>`` JSON on the record) holding the ``state_delta`` sent with
it (``/run_sse``'s body): the worker applies it with the response event, as ADK's runner does. A FunctionResponse
has no such field, so no client's answer can carry one."""


def with_state_delta(wire: dict[str, Any], state_delta: dict[str, Any] | None) -> dict[str, Any]:
    """A stored response carrying the state delta sent with it (unchanged without one)."""
    return {**wire, STATE_DELTA_KEY: state_delta} if state_delta else wire


def split_state_delta(stored: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Stored responses without their state deltas, and those deltas merged in the order they were sent."""
    responses, delta = [], {}
    for response in stored:
        if STATE_DELTA_KEY in response:
            response = dict(response)
            delta.update(response.pop(STATE_DELTA_KEY) or {})
        responses.append(response)
    return responses, delta


TRACEPARENT_KEY = "agentqTraceparent"
"""Key of a stored function response holding the W3C trace context it was sent under: the run that resumes the
invocation links to it (runtime.tracing.otel). Like STATE_DELTA_KEY, no client's answer can carry one."""


def with_traceparent(wire: dict[str, Any], traceparent: str | None) -> dict[str, Any]:
    """A stored response carrying the trace context it was sent under (unchanged without one)."""
    return {**wire, TRACEPARENT_KEY: traceparent} if traceparent else wire


def split_traceparents(stored: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], list[str]]:
    """Stored responses without their trace contexts, and those contexts (each once, in the order sent)."""
    responses, traces = [], []
    for response in stored:
        if TRACEPARENT_KEY in response:
            response = dict(response)
            traceparent = response.pop(TRACEPARENT_KEY)
            if traceparent not in traces:
                traces.append(traceparent)
        responses.append(response)
    return responses, traces
