"""The LlmAgent loop: call the model, commit its answer, run its tool calls, repeat until a final answer."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from typing import TYPE_CHECKING

from google.genai import types

from ..auth import requests as credential_requests
from ..contexts import resume
from ..contexts.callback_context import CallbackContext
from ..contexts.run_config import StreamingMode
from ..errors import ModelError
from ..events import Event
from ..events.event_actions import empty_actions
from ..models.llm_request import LlmRequest
from ..models.llm_response import LlmResponse
from ..sessions.base_session_service import set_fields
from ..tools.finish_task_tool import FINISH_TASK_INSTRUCTION, FINISH_TASK_TOOL_NAME, is_finish_task_terminal
from ..tracing import steps
from . import _fast, delegation, functions, model_callbacks, resume_plan, transfer
from .agent_modes import DELEGATED_TASK_MODES, AgentMode, mode_of
from .contents import build_contents
from .contents_cache import cached_contents
from .instructions import system_instruction

if TYPE_CHECKING:
    from ..agents.llm_agent import LlmAgent
    from ..contexts.invocation_context import InvocationContext


async def run_flow(agent: LlmAgent, ctx: InvocationContext) -> AsyncGenerator[Event, None]:
    """Run ``agent`` until it gives a final answer, transfers, or pauses on a long-running call.

    A task it delegated in an earlier turn and that still waits for the user is resumed first; the agent
    goes on only once the task is done (see ``flows.delegation``)."""
    opened = delegation.open_task_call(agent, ctx)
    if opened is not None:
        last = None
        async for event in delegation.run_delegated_call(agent, ctx, *opened):
            last = event
            yield event
        if last is None or _handed_over(agent, last):
            return
    if ctx.run.resumed:
        plan = resume_plan.plan(agent, ctx)
        if plan.kind == "done" or (plan.kind == "finished" and not ctx.run.llm_end_events):
            ctx.end_invocation = True  # nothing left, not even the after-agent callback
            return
        if plan.kind == "finished":
            return  # the agent still commits its end_of_agent (and runs its after-agent callback)
        if plan.kind == "paused":
            return
        if plan.kind == "transfer":
            if ctx.run.llm_end_events and not resume_plan.has_ended(agent, ctx):  # stopped before its end
                yield agent._checkpoint(ctx, end_of_agent=True)
            async for event in ctx.find_agent(plan.target).run_async(ctx):
                yield event
            return
        if plan.kind == "run_calls":
            await credential_requests.load_answers(ctx, plan.credentials)  # before the calls that asked run again
            last = None
            async for event in _answer_calls(agent, ctx, plan.calls, agent.tools_dict(), plan.confirmations):
                last = event
                yield event
            # None: only long-running calls, still unanswered; paused: other calls still wait for a person
            if last is None or last.is_final_response() or ctx.is_paused() or _handed_over(agent, last):
                return
    while True:
        last = None
        async for event in _one_step(agent, ctx):
            last = event
            yield event
        if last is None or last.is_final_response() or last.partial or _handed_over(agent, last):
            return
        if ctx.end_invocation:  # a tool asked for the user's credential: the invocation parks on the request
            return
        if is_finish_task_terminal(last):
            return  # the task is done: its result goes to the agent that delegated it, not to this model


def _handed_over(agent: LlmAgent, last: Event) -> bool:
    """True when the step ended with another agent's event: a delegated task waiting for the user (the
    delegator's answer to the call, by ``user`` or the agent itself, is what lets the agent go on)."""
    return last.author != agent.name and last.author != "user"


async def build_request(agent: LlmAgent, ctx: InvocationContext) -> LlmRequest:
    """Instruction, tools and conversation for the next model call."""
    # Per-agent billing slices, as ADK labels requests; a label the user set (even this one) is kept.
    config = agent.base_config()
    mine = {"labels": {"adk_agent_name": agent.name, **(config.labels or {})}}
    mode = mode_of(agent)
    if agent.output_schema is not None and mode != AgentMode.TASK:  # a task's output comes via finish_task
        mine.update(response_schema=agent.output_schema, response_mime_type="application/json")
    # a delegated agent may still transfer (the tool stays), but is not told about it
    targets = [] if mode in DELEGATED_TASK_MODES else agent.transfer_targets()
    instruction = await system_instruction(agent, ctx, targets)
    if mode == AgentMode.TASK:
        instruction = "\n\n".join(filter(None, [instruction, FINISH_TASK_INSTRUCTION]))
    mine["system_instruction"] = instruction
    declarations, tools = agent.tool_declarations()
    if declarations is not None:
        mine["tools"] = [*(config.tools or []), declarations]
    # one copy with this call's fields, well typed, without pydantic's per-assignment checks
    config = _fast.replace(config, mine)
    compaction = ctx.events_compaction_config
    if compaction is not None and compaction.has_token_threshold():
        # before the contents are built, as ADK does, so a summary made now is in this very request
        await compaction.compact_before_model_call(
            session=ctx.session, session_service=ctx.session_service, agent=agent,
            contents_of=cached_contents(ctx.run.contents, agent.name, ctx.branch).build)
    contents = _contents(agent, ctx)
    if mode in DELEGATED_TASK_MODES:
        leading = delegation.leading_content(agent, ctx)
        if leading is not None:  # the call that opened the task is its first user turn
            contents = [leading, *contents]
    # model_construct: the parts are already validated objects; re-validating them per call is pure cost
    return LlmRequest.model_construct(
        model=agent.canonical_model.model, contents=contents, config=config, tools_dict=dict(tools)
    )


def node_run_contents(ctx: InvocationContext, agent_name: str) -> list[types.Content]:
    """A workflow node agent's view: its input as the user's message, then its own events of this node run and
    the answers to their calls (as ADK 2 runs an agent node: single turn, nothing else of the session)."""
    lead = [ctx.node_input_content] if ctx.node_input_content is not None else []
    return lead + build_contents(resume.node_run_events(ctx.run.events, ctx.node_path), agent_name, ctx.branch)


def _contents(agent: LlmAgent, ctx: InvocationContext) -> list[types.Content]:
    """The conversation, built incrementally from the history unless the agent sees only the current turn, or
    has a before-model callback (it may edit the contents in place, and cached contents are reused)."""
    if ctx.node_path is not None:
        return node_run_contents(ctx, agent.name)
    if (agent.include_contents == "none" or agent.before_model_callback
            or ctx.plugin_manager.has_callback("before_model_callback")):
        return build_contents(ctx.session.events, agent.name, ctx.branch,
                              current_turn_only=agent.include_contents == "none")
    return cached_contents(ctx.run.contents, agent.name, ctx.branch).build(ctx.session.events)


async def _one_step(agent: LlmAgent, ctx: InvocationContext) -> AsyncGenerator[Event, None]:
    request = await build_request(agent, ctx)
    template = _fast.event(invocation_id=ctx.invocation_id, author=agent.name, branch=ctx.branch)
    has_callbacks = agent.before_model_callback or agent.after_model_callback or ctx.plugin_manager.plugins
    callback_context = CallbackContext(ctx, event_actions=template.actions) if has_callbacks else None
    span = steps.model_call_started(ctx, request.model or "", template.id) if ctx.run.spans else None
    event = None
    try:
        async for response in _responses(agent, ctx, request, callback_context):
            if not response.content and not response.error_code and not response.interrupted:
                continue
            event = _to_event(template, response, request)
            if not event.partial:
                steps.model_call_ended(span, event)  # the model is done: its tool calls get their own spans
            yield event
            if not event.partial:
                calls = event.get_function_calls()
                if calls:
                    async for answer in _answer_calls(agent, ctx, calls, request.tools_dict):
                        yield answer
    finally:
        steps.model_call_ended(span, event)


async def _responses(
    agent: LlmAgent, ctx: InvocationContext, request: LlmRequest, callback_context: CallbackContext | None
) -> AsyncGenerator[LlmResponse, None]:
    """The model's answers with the model callbacks applied (the plugins' first, see flows.model_callbacks);
    an error the plugins do not answer stays an error, and a ModelError becomes an error answer."""
    plugins = ctx.plugin_manager
    if agent.before_model_callback or plugins.has_callback("before_model_callback"):
        replaced = await model_callbacks.before_model(agent, plugins, callback_context, request)
        if replaced is not None:
            yield replaced
            return
    model = _model_for_call(agent, ctx)
    ctx.increment_llm_call_count()
    stream = ctx.run_config.streaming_mode == StreamingMode.SSE
    answers = model.generate_content_async(request, stream=stream)
    if plugins.has_callback("on_model_error_callback"):
        answers = model_callbacks.answer_errors(answers, plugins, callback_context, request)
    after = agent.after_model_callback or plugins.has_callback("after_model_callback")
    try:
        async for response in answers:
            if after:
                response = await model_callbacks.after_model(agent, plugins, callback_context, response)
            yield response
    except ModelError as exc:
        yield LlmResponse(error_code=exc.code or "MODEL_ERROR", error_message=str(exc))


def _model_for_call(agent: LlmAgent, ctx: InvocationContext):
    """The agent's model, unless a plugin stands in for it (``model_for_call``: the conformance replay, which
    google-adk 2.13 also substitutes at the model, after the before-model callbacks)."""
    for plugin in ctx.plugin_manager.plugins:
        stand_in = getattr(plugin, "model_for_call", None)
        if stand_in is not None:
            model = stand_in(invocation_id=ctx.invocation_id, agent_name=agent.name)
            if model is not None:
                return model
    return agent.canonical_model


def _to_event(template: Event, response: LlmResponse, request: LlmRequest) -> Event:
    """The committed (or, for a partial chunk, forwarded) event of one model answer."""
    event = _fast.event(
        id=template.id,
        timestamp=template.timestamp,
        invocation_id=template.invocation_id,
        author=template.author,
        branch=template.branch,
        # each event gets a snapshot of what the model callbacks recorded so far (usually nothing)
        actions=empty_actions() if template.actions.is_empty() else template.actions.model_copy(deep=True),
        **_response_fields(response),
    )
    calls = event.get_function_calls()
    if calls:
        functions.populate_call_ids(calls)
        set_fields(event, long_running_tool_ids=functions.long_running_ids(calls, request.tools_dict))
    return event


def _response_fields(response: LlmResponse) -> dict:
    """The response's LlmResponse fields that are not None."""
    if type(response) is LlmResponse:  # its __dict__ is exactly those fields (extra is forbidden): no getattr
        return {name: value for name, value in response.__dict__.items() if value is not None}
    return {name: getattr(response, name) for name in _RESPONSE_FIELDS if getattr(response, name) is not None}


_RESPONSE_FIELDS = tuple(LlmResponse.model_fields)


def _put_task_output(agent, calls, tools, answers: list[Event]) -> None:
    """As ADK 2.13: the event answering a task's finish_task for good carries the task's output (the call's
    arguments, unwrapped as the tool declares them) in ``event.output``; a turn that also delegates does not."""
    finish = next((call for call in reversed(calls) if call.name == FINISH_TASK_TOOL_NAME), None)
    if finish is None or mode_of(agent) != AgentMode.TASK:
        return
    for answer in answers:
        if is_finish_task_terminal(answer):
            answer.output = tools[FINISH_TASK_TOOL_NAME].output_of(dict(finish.args or {}))


async def _answer_calls(agent, ctx, calls, tools, confirmations=None) -> AsyncGenerator[Event, None]:
    """Run the calls, yield their answer, then hand over if a tool asked for a transfer.

    Calls to task and single_turn sub-agents run after the others, one at a time, each answered by an event
    of its own (see ``flows.delegation``); a task left waiting for the user ends the step there."""
    delegated = [(call, target) for call in calls if (target := delegation.delegated_target(tools, call))]
    if delegated:
        calls = [call for call in calls if not delegation.delegated_target(tools, call)]
    answers = await functions.run_calls(agent, ctx, calls, tools, confirmations) if calls else []
    if not delegated:
        _put_task_output(agent, calls, tools, answers)
    for answer in answers:
        yield answer
    if delegated:
        if ctx.halted():
            return
        for call, target in delegated:
            last = None
            async for event in delegation.run_delegated_call(agent, ctx, call, target):
                last = event
                yield event
            if last is None or _handed_over(agent, last) or ctx.halted():
                return
        return
    if answers and not ctx.run.failed and answers[-1].actions.transfer_to_agent:
        target = transfer.transfer_target(agent, answers[-1].actions.transfer_to_agent, ctx)
        if ctx.run.llm_end_events:  # as google-adk 2.13: the agent that hands over ends before the target runs
            yield agent._checkpoint(ctx, end_of_agent=True)
        async for event in target.run_async(ctx):
            yield event
