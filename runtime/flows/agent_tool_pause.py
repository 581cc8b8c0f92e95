"""A pause inside an AgentTool's agent, passed up to the caller's invocation (adk-python #7245).

The flow of one pause:
1. The wrapped agent runs in a child session (``tools.agent_tool_session``) and ends paused: calls of its own
   (a confirmation request, a LongRunningFunctionTool call) wait for a client. Instead of a result, the
   AgentTool answers ``paused(calls)`` with the child's calls the caller's client has not been shown yet.
2. ``set_aside`` turns that answer into a *proxy event* of the caller: authored by the caller agent, it
   re-issues those calls with the same ids, names and args, long-running, and names in ``custom_metadata``
   the AgentTool call it stands for. The AgentTool call gets no response yet: the caller's invocation pauses
   on the proxy calls like on any long-running call, and a client answers them by id.
3. The answer resumes the caller's invocation (routing finds the proxy call in the caller's session);
   ``answered`` has the resume plan run the AgentTool call again, journaled once per answer; the AgentTool
   forwards the answers (``answers_for``) to its agent, which resumes its own invocation by call id, and
   returns the agent's final text, or pauses again.
The caller's model sees neither the proxy calls nor their answers (``is_proxy_event``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from google.genai import types

from ..events import Event, EventActions
from . import _fast

if TYPE_CHECKING:
    from ..contexts.invocation_context import InvocationContext

PAUSED_KEY = "agentq:agent_tool_paused"
"""The key of an AgentTool's answer while its agent waits (a dict, so the tool journal keeps it as is)."""
PROXY_KEY = "agentq:agent_tool_call"
"""The ``custom_metadata`` key of a proxy event: the AgentTool call (id, name, args) it stands for."""

Answer = tuple[list[types.Part], EventActions, Exception | None]
"""What ``functions`` gets from running one call: its answer parts, its actions, its crash."""


def paused(calls: list[types.FunctionCall]) -> dict[str, Any]:
    """The AgentTool's answer when its agent waits on ``calls`` (those not yet re-issued to the caller)."""
    return {PAUSED_KEY: [call.model_dump(mode="json", exclude_none=True) for call in calls]}


def is_paused(response: Any) -> bool:
    """True when ``response`` is a ``paused`` answer, not a result."""
    return type(response) is dict and PAUSED_KEY in response


def paused_calls(response: Any) -> list[types.FunctionCall] | None:
    """The calls a ``paused`` answer re-issues; None when ``response`` is a result."""
    if not is_paused(response):
        return None
    return [types.FunctionCall.model_validate(call) for call in response[PAUSED_KEY]]


def proxy_parts(calls: list[types.FunctionCall]) -> list[types.Part]:
    """The parts standing for the paused calls in a call's answer, until ``set_aside`` moves them out."""
    return [types.Part(function_call=call) for call in calls]


def set_aside(ctx: InvocationContext, author: str, calls: list[types.FunctionCall], answers: list[Answer]
              ) -> tuple[list[Answer], list[Event]]:
    """``answers`` without those of paused AgentTool calls (no response for them yet), and a proxy event
    for each of those, carrying the state its agent's run changed."""
    if not any(parts and parts[0].function_call for parts, _, _ in answers):
        return answers, []
    kept: list[Answer] = []
    proxies = []
    for call, (parts, actions, crash) in zip(calls, answers, strict=True):
        if parts and parts[0].function_call:
            actions.skip_summarization = None  # no answer to keep from the model yet
            proxies.append(_fast.event(
                invocation_id=ctx.invocation_id, author=author, branch=ctx.branch, actions=actions,
                content=_fast.content("model", parts), long_running_tool_ids={p.function_call.id for p in parts},
                custom_metadata={PROXY_KEY: call.model_dump(mode="json", exclude_none=True)},
            ))
            parts = []
        kept.append((parts, actions, crash))
    return kept, proxies


def is_proxy_event(event: Event) -> bool:
    """True for an event re-issuing an AgentTool's pending calls: client traffic the model is not shown."""
    return bool(event.custom_metadata) and PROXY_KEY in event.custom_metadata


def _proxied(events: list[Event]) -> dict[str, types.FunctionCall]:
    """Proxy call id -> the AgentTool call it stands for, from the proxy events among ``events``."""
    owners = {}
    for event in events:
        if is_proxy_event(event):
            owner = types.FunctionCall.model_validate(event.custom_metadata[PROXY_KEY])
            owners.update((call.id, owner) for call in event.get_function_calls())
    return owners


def answered(events: list[Event], answer: Event) -> dict[str, types.FunctionCall]:
    """The AgentTool calls whose proxy calls ``answer`` (a client's message) answers, by id, in answer order.
    ``events`` are the invocation's earlier events."""
    responses = answer.get_function_responses()
    if not responses:
        return {}
    owners = _proxied(events)
    found = {}
    for response in responses:
        owner = owners.get(response.id)
        if owner is not None:
            found.setdefault(owner.id, owner)
    return found


def answers_for(events: list[Event], call_id: str) -> list[types.FunctionResponse]:
    """The answers to AgentTool call ``call_id``'s proxy calls in the latest client message that has any."""
    mine = {proxy for proxy, owner in _proxied(events).items() if owner.id == call_id}
    if not mine:
        return []
    for event in reversed(events):
        if event.author == "user":
            responses = [response for response in event.get_function_responses() if response.id in mine]
            if responses:
                return responses
    return []
