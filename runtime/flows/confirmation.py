"""Tool confirmation (ADK 2.x): a call held back until a person approves it, then run once, or rejected.

The flow of one confirmation:
1. ``gate`` answers a call whose tool requires confirmation, instead of running it, and records the request
   on the call's actions (a tool may also call ``tool_context.request_confirmation`` itself).
2. ``request_event`` turns the requests into an ``adk_request_confirmation`` function call per held call,
   long-running, so the invocation pauses (parks, in the worker) like on any long-running call.
3. The client answers that call with a FunctionResponse ``{"confirmed": bool, "payload": ...}``;
   ``answered`` reads the answers on resume, and the original calls run again with
   ``tool_context.tool_confirmation`` set: once (the tool journal keys the run by the confirmation's id).
The model never sees the confirmation calls and answers (``strip_confirmation_parts``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from google.genai import types

from ..errors import CallNotPendingError, InvalidMessageError
from ..events import Event, ToolConfirmation
from ..events.tool_confirmation import REQUEST_CONFIRMATION_FUNCTION_CALL_NAME
from ..ids import new_client_call_id
from . import _fast

if TYPE_CHECKING:
    from ..contexts.invocation_context import InvocationContext
    from ..contexts.tool_context import ToolContext
    from ..tools.base_tool import BaseTool

CONFIRMATION_REQUIRED_ERROR = {"error": "This tool call requires confirmation, please approve or reject."}
REJECTED_ERROR = {"error": "This tool call is rejected."}


async def gate(tool: BaseTool, args: dict[str, Any], tool_context: ToolContext) -> dict[str, str] | None:
    """The answer to a call that must not run (confirmation pending or refused); None lets it run."""
    if await tool.check_require_confirmation(args, tool_context) is not True:
        return None
    confirmation = tool_context.tool_confirmation
    if confirmation is None:
        tool_context.request_confirmation(
            hint=f"Please approve or reject the tool call {tool.name}() by responding with a FunctionResponse "
            "with an expected ToolConfirmation payload."
        )
        return dict(CONFIRMATION_REQUIRED_ERROR)
    if not confirmation.confirmed:
        return dict(REJECTED_ERROR)
    return None


def request_event(ctx: InvocationContext, author: str, calls: list[types.FunctionCall],
                  requests: dict[str, ToolConfirmation]) -> Event:
    """One ``adk_request_confirmation`` call per held call, each long-running (the invocation pauses on it)."""
    parts = []
    for call in calls:
        if call.id not in requests:
            continue
        request = types.FunctionCall(
            id=new_client_call_id(),
            name=REQUEST_CONFIRMATION_FUNCTION_CALL_NAME,
            args={
                "originalFunctionCall": call.model_dump(mode="json", exclude_none=True, by_alias=True),
                "toolConfirmation": requests[call.id].model_dump(mode="json", by_alias=True, exclude_none=True),
            },
        )
        parts.append(types.Part(function_call=request))
    return _fast.event(
        invocation_id=ctx.invocation_id, author=author, branch=ctx.branch,
        content=_fast.content("model", parts), long_running_tool_ids={p.function_call.id for p in parts},
    )


def _requests(events: list[Event]) -> dict[str, types.FunctionCall]:
    """The ``adk_request_confirmation`` calls among ``events``, by id."""
    return {
        call.id: call for event in events for call in event.get_function_calls()
        if call.name == REQUEST_CONFIRMATION_FUNCTION_CALL_NAME
    }


def answered(events: list[Event], answer: Event) -> dict[str, tuple[types.FunctionCall, ToolConfirmation, str]]:
    """The held calls ``answer`` (a client's message) confirms or rejects: original call id -> (the call, the
    answer, the confirmation call's id). ``events`` are the invocation's earlier events."""
    requests = _requests(events)
    found = {}
    for response in answer.get_function_responses():
        request = requests.get(response.id)
        if request is None:
            continue
        original = types.FunctionCall.model_validate((request.args or {}).get("originalFunctionCall") or {})
        found[original.id] = (original, ToolConfirmation.from_response_dict(response.response or {}), response.id)
    return found


def check_answers(session_events: list[Event], responses: list[types.FunctionResponse]) -> None:
    """Refuse, before anything is committed, answers to confirmation requests that are malformed (no boolean
    ``confirmed``) or replayed (the request was answered already); a nameless answer gets the request's name."""
    if not responses:  # a text message: no need to scan the history
        return
    requests = _requests(session_events)
    mine = [response for response in responses if response.id in requests]
    if not mine:
        return
    answered_ids = {
        response.id for event in session_events if event.author == "user"
        for response in event.get_function_responses()
    }
    for response in mine:
        if response.id in answered_ids:
            raise CallNotPendingError(f"confirmation {response.id!r} was answered already; an approval is used once")
        try:
            ToolConfirmation.from_response_dict(response.response or {})
        except ValueError as exc:
            raise InvalidMessageError(
                f"the answer to confirmation {response.id!r} must be {{'confirmed': true|false, 'payload': ...}} "
                f"with a boolean 'confirmed': {exc}"
            ) from None
        if not response.name:
            response.name = REQUEST_CONFIRMATION_FUNCTION_CALL_NAME
