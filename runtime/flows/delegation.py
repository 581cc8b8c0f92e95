"""Running a coordinator's calls to its task and single_turn sub-agents, and finding open tasks in history.

The sequence, as ADK 2 commits it (``C`` the coordinator, ``T`` the delegated agent, ``@`` its branch
``<T>@<call id>``):

- task: ``C`` call ``T(args)``; ``T``'s events on ``@`` (its model is first shown the arguments as JSON).
  When ``T`` ends its turn without finish_task (it asks the user something) the invocation ends there; the
  user's next message is committed on ``@`` and the turn goes to ``C``, which resumes ``T``. When ``T``'s
  finish_task is answered "Task completed.", ``C`` gets an event by ``user`` answering its call with the
  task's output (a dict as it is, anything else as ``{"output": value}``) and calls its model again.
- single_turn: ``C`` call ``T(args)``; ``T``'s events on ``@`` (shown only the ``request``, or the
  input_schema arguments as JSON); then ``C``'s own answer to the call with ``T``'s final text as
  ``{"result": text}`` (its parsed JSON with an output_schema), and ``C`` goes on.

Everything here is read from committed history, so the next turn may run on another worker.
"""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator, Iterable
from typing import TYPE_CHECKING, Any

from google.genai import types

from ..events import Event, NodeInfo
from ..events.rewinds import live_events
from ..tools.finish_task_tool import FINISH_TASK_TOOL_NAME, closes_task
from . import _fast
from .agent_modes import AgentMode, delegation_call_id, mode_of, scope_branch

if TYPE_CHECKING:
    from ..agents.base_agent import BaseAgent
    from ..agents.llm_agent import LlmAgent
    from ..contexts.invocation_context import InvocationContext


def delegated_target(tools: dict[str, Any], call: types.FunctionCall) -> BaseAgent | None:
    """The sub-agent ``call`` delegates to, or None for an ordinary tool call."""
    return getattr(tools.get(call.name), "delegates_to", None)


async def run_delegated_call(
    agent: LlmAgent, ctx: InvocationContext, call: types.FunctionCall, target: BaseAgent
) -> AsyncGenerator[Event, None]:
    """Run ``target`` for ``call`` on its own branch; then, if it is done, answer the call.

    No answer means the task waits for the user (or the sub-agent failed or paused): the caller stops."""
    branch = scope_branch(ctx.branch, target.name, call.id)
    if mode_of(target) == AgentMode.TASK:
        done, args = task_outcome(ctx.session.events, branch)
        if not done:  # a task finished before a crash is not run again
            async for event in target.run_async(ctx.model_copy(update={"branch": branch})):
                yield event
            if ctx.run.failed:
                return
            done, args = task_outcome(ctx.session.events, branch)
        if done:
            output = _task_output(target, args)
            yield _answer(ctx, "user", call, output if isinstance(output, dict) else {"output": output})
        return
    last_answer = None
    async for event in target.run_async(ctx.model_copy(update={"branch": branch})):
        if event.author == target.name and not event.partial and event.is_final_response():
            last_answer = event
        yield event
    if ctx.run.failed or ctx.is_paused():
        return
    output = _single_turn_output(target, last_answer)
    yield _answer(ctx, agent.name, call, output if isinstance(output, dict) else {"result": output})


def _single_turn_output(target: Any, event: Event | None) -> Any:
    """A single_turn agent's result: its final text, parsed when it has an output_schema."""
    text = event.text() if event is not None else ""
    schema = getattr(target, "output_schema", None)
    if schema is not None and text.strip():
        return schema.model_validate_json(text).model_dump(mode="json")
    return text


def _answer(ctx: InvocationContext, author: str, call: types.FunctionCall, response: dict) -> Event:
    event = _fast.event(
        invocation_id=ctx.invocation_id, author=author, branch=ctx.branch,
        content=_fast.content("user", [_fast.function_response_part(call.id, call.name, response)]),
    )
    # the delegator's path, whoever is named its author (google-adk 2.13 writes a task's answer as the user's)
    event.node_info = NodeInfo(path=ctx.agent_path)
    return event


def task_outcome(events: Iterable[Event], branch: str) -> tuple[bool, Any]:
    """``(done, arguments)`` of the task on ``branch``: done once a finish_task call there was answered for
    good, with that call's arguments."""
    calls: dict[str, types.FunctionCall] = {}
    for event in events:
        if event.branch != branch or event.content is None:
            continue
        for call in event.get_function_calls():
            if call.name == FINISH_TASK_TOOL_NAME:
                calls[call.id] = call
        for response in event.get_function_responses():
            if closes_task(response):
                call = calls.get(response.id)
                return True, dict(call.args or {}) if call is not None else {}
    return False, None


def _task_output(target: BaseAgent, args: dict) -> Any:
    """The task's output carried by its finish_task arguments, unwrapped as its tool declares them."""
    tool = target.tools_dict().get(FINISH_TASK_TOOL_NAME) if hasattr(target, "tools_dict") else None
    return tool.output_of(args) if tool is not None else args


def open_task_call(agent: LlmAgent, ctx: InvocationContext) -> tuple[types.FunctionCall, BaseAgent] | None:
    """The latest task delegation ``agent`` made on its branch that has no answer yet, with its target."""
    tools = agent.tools_dict()
    if not any(getattr(tool, "delegates_to", None) is not None for tool in tools.values()):
        return None
    calls: dict[str, tuple[types.FunctionCall, BaseAgent]] = {}
    answered: set[str] = set()
    for event in live_events(ctx.session.events):
        if event.content is None:
            continue
        if event.author == agent.name and event.branch == ctx.branch and not event.partial:
            for call in event.get_function_calls():
                target = delegated_target(tools, call)
                if target is not None and mode_of(target) == AgentMode.TASK:
                    calls[call.id] = (call, target)
        answered.update(response.id for response in event.get_function_responses())
    waiting = [pair for call_id, pair in calls.items() if call_id not in answered]
    return waiting[-1] if waiting else None


def open_task_branch(events: list[Event], agents: dict[str, BaseAgent]) -> str | None:
    """The branch of the task still waiting for the user, where the user's next message belongs (the
    innermost, when a task delegated a task of its own); None when no task is open."""
    if not any(mode_of(agent) == AgentMode.TASK for agent in agents.values()):
        return None  # the common case: nothing to look for in the history
    events = live_events(events)  # a rewound delegation is not open
    opened: dict[str, str] = {}
    for event in events:
        if event.content is None or event.partial:
            continue
        for call in event.get_function_calls():
            target = agents.get(call.name)
            if (mode_of(target) == AgentMode.TASK and target.parent_agent is not None
                    and target.parent_agent.name == event.author):
                opened[call.id] = scope_branch(event.branch, target.name, call.id)
        for response in event.get_function_responses():
            opened.pop(response.id, None)
    for branch in reversed(opened.values()):
        if not task_outcome(events, branch)[0]:
            return branch
    return None


_SINGLE_TURN_REQUEST = "request"


def leading_content(agent: LlmAgent, ctx: InvocationContext) -> types.Content | None:
    """What a delegated agent is shown first: the call that opened its branch, as the user's turn (a task
    sees the arguments as JSON; a single_turn agent its ``request``, or its input_schema arguments as JSON)."""
    call_id = delegation_call_id(ctx.branch)
    if call_id is None:
        return None
    call = _call_with_id(ctx.session.events, call_id)
    if call is None or not call.args:
        return None
    args = dict(call.args)
    schema = getattr(agent, "input_schema", None)
    if mode_of(agent) == AgentMode.SINGLE_TURN:
        if schema is not None:
            text = schema.model_validate(args).model_dump_json()
        else:
            request = args.get(_SINGLE_TURN_REQUEST)
            text = request if isinstance(request, str) else json.dumps(request, ensure_ascii=False)
    else:
        text = json.dumps(args, ensure_ascii=False)
    return types.Content(role="user", parts=[types.Part(text=text)])


def _call_with_id(events: list[Event], call_id: str) -> types.FunctionCall | None:
    for event in reversed(events):
        for call in event.get_function_calls():
            if call.id == call_id:
                return call
    return None
