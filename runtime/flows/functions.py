"""Running the function calls of one model turn and answering them in one event."""

from __future__ import annotations

import asyncio
import copy
import logging
from typing import TYPE_CHECKING, Any

from google.genai import types

from ..agents.callbacks import first_answer
from ..events import Event, EventActions
from ..tools.tool_context import ToolContext
from ..tools.tool_journal import NO_RESPONSE, in_doubt_error
from . import _fast
from .contents import CLIENT_CALL_ID_PREFIX

if TYPE_CHECKING:
    from ..agents.invocation_context import InvocationContext
    from ..agents.llm_agent import LlmAgent
    from ..tools.base_tool import BaseTool

log = logging.getLogger(__name__)


def populate_call_ids(calls: list[types.FunctionCall]) -> None:
    """Give every call without an id a client-made one, so its response can be matched."""
    for call in calls:
        if not call.id:
            call.id = f"{CLIENT_CALL_ID_PREFIX}{_fast.uuid4_str()}"


def long_running_ids(calls: list[types.FunctionCall], tools: dict[str, BaseTool]) -> set[str]:
    """The ids of the calls that go to long-running tools."""
    return {call.id for call in calls if call.name in tools and tools[call.name].is_long_running}


def unknown_tool_error(name: str, tools: dict[str, BaseTool]) -> dict[str, str]:
    """The answer to a call of a tool the agent does not have (the reference runtime's wording)."""
    return {
        "error": f"Tool '{name}' not found.\nAvailable tools: {', '.join(tools)}\n\nPossible causes:\n"
        "  1. LLM hallucinated the function name - review agent instruction clarity\n"
        "  2. Tool not registered - verify agent.tools list\n"
        "  3. Name mismatch - check for typos\n\n"
        "Suggested fixes:\n"
        "  - Review agent instruction to ensure tool usage is clear\n"
        "  - Verify tool is included in agent.tools list\n"
        "  - Check for typos in function name"
    }


async def run_calls(
    agent: LlmAgent, ctx: InvocationContext, calls: list[types.FunctionCall], tools: dict[str, BaseTool]
) -> Event | None:
    """Run ``calls`` (concurrently when several) and merge their answers into one event, parts in call order.

    Long-running tools that return None add no part; when no call has an answer there is no event.
    """
    if len(calls) == 1:
        answers = [await _run_one(agent, ctx, calls[0], tools)]
    else:
        answers = await asyncio.gather(*(_run_one(agent, ctx, call, tools) for call in calls))
    parts = [part for part, _ in answers if part is not None]
    if not parts:
        return None
    actions = [a for part, a in answers if part is not None]
    return _fast.event(
        invocation_id=ctx.invocation_id,
        author=agent.name,
        branch=ctx.branch,
        content=_fast.content("user", parts),
        actions=actions[0] if len(actions) == 1 else merge_actions(actions),
    )


def merge_actions(all_actions: list[EventActions]) -> EventActions:
    """Actions of several tool calls as one: dicts merged, later scalars win."""
    merged = EventActions()
    for actions in all_actions:
        merged.state_delta.update(actions.state_delta)
        merged.artifact_delta.update(actions.artifact_delta)
        merged.requested_auth_configs.update(actions.requested_auth_configs)
        for name in ("skip_summarization", "transfer_to_agent", "escalate"):
            value = getattr(actions, name)
            if value is not None:
                setattr(merged, name, value)
    return merged


async def _run_one(
    agent: LlmAgent, ctx: InvocationContext, call: types.FunctionCall, tools: dict[str, BaseTool]
) -> tuple[types.Part | None, EventActions]:
    tool_context = ToolContext(ctx, function_call_id=call.id)
    tool = tools.get(call.name)
    if tool is None:
        response: Any = unknown_tool_error(call.name, tools)
    else:
        response = await _journaled(agent, ctx, tool, call, tool_context)
        if tool.is_long_running and not response:  # nothing yet: the client will answer later
            return None, tool_context.actions
    if not isinstance(response, dict):
        response = {"result": response}
    part = _fast.function_response_part(call.id, call.name, response)
    return part, tool_context.actions


async def _journaled(agent, ctx, tool, call, tool_context) -> Any:
    """Run the tool once per call id: reuse a completed answer, refuse to guess an unknown outcome."""
    journal = ctx.tool_journal
    if journal is None:
        # Without a journal, still never repeat a tool whose answer this process computed but did not commit
        # (a stopped ParallelAgent branch): the runner keeps such answers until their event is committed.
        key = (ctx.invocation_id, call.id)
        if key in ctx.run.uncommitted:
            response, actions = ctx.run.uncommitted[key]
            tool_context.actions.__dict__.update(actions.__dict__)  # what the tool asked for (transfer, state)
            return response
        response = await _invoke(agent, tool, call, tool_context)
        ctx.run.uncommitted[key] = (response, tool_context.actions)
        return response
    previous = await journal.begin(ctx.invocation_id, call.id, tool.name)
    if previous is not None and previous.status == "completed":
        return None if previous.response == NO_RESPONSE else previous.response
    if previous is not None and not tool.idempotent:
        response: Any = in_doubt_error(tool.name)
    else:
        response = await _invoke(agent, tool, call, tool_context)
    if tool.is_long_running and not response:
        stored = NO_RESPONSE
    else:
        stored = response if isinstance(response, dict) else {"result": response}
    await journal.complete(ctx.invocation_id, call.id, stored)
    return response


async def _invoke(agent, tool, call, tool_context) -> Any:
    """Callbacks around the tool; a crash becomes an error answer the model can react to."""
    args = copy.deepcopy(call.args) if call.args else {}  # the committed call must not change under the tool
    response = await first_answer(agent.before_tool_callback, tool=tool, args=args, tool_context=tool_context)
    if response is None:
        try:
            response = await tool.run_async(args=args, tool_context=tool_context)
        except Exception as exc:  # a tool bug must not hang or kill the invocation; the model sees it
            log.warning("tool %r raised in invocation %s: %r", tool.name, tool_context.invocation_id, exc)
            response = {"error": f"Tool `{tool.name}` raised {type(exc).__name__}: {exc}"}
    altered = await first_answer(
        agent.after_tool_callback, tool=tool, args=args, tool_context=tool_context, tool_response=response
    )
    return response if altered is None else altered
