"""Running the function calls of one model turn and answering them in one event."""

from __future__ import annotations

import asyncio
import copy
import json
import logging
from typing import TYPE_CHECKING, Any

from google.genai import types

from ..auth import requests as credential_requests
from ..contexts import failures
from ..contexts.callbacks import first_answer
from ..contexts.tool_context import ToolContext
from ..events import Event, EventActions, ToolConfirmation
from ..ids import new_client_call_id
from ..tools.tool_journal import NO_RESPONSE, in_doubt_error
from ..tracing import steps
from . import _fast, agent_tool_pause, confirmation

if TYPE_CHECKING:
    from ..agents.llm_agent import LlmAgent
    from ..contexts.invocation_context import InvocationContext
    from ..tools.base_tool import BaseTool

log = logging.getLogger(__name__)


def populate_call_ids(calls: list[types.FunctionCall]) -> None:
    """Give every call without an id a client-made one, so its response can be matched."""
    for call in calls:
        if not call.id:
            call.id = new_client_call_id()


def long_running_ids(calls: list[types.FunctionCall], tools: dict[str, BaseTool]) -> set[str]:
    """The ids of the calls that go to long-running tools."""
    return {call.id for call in calls if call.name in tools and tools[call.name].is_long_running}


def unknown_tool_error(name: str, tools: dict[str, BaseTool]) -> dict[str, str]:
    """The answer to a call of a tool the agent does not have (the reference runtime's wording)."""
    return {
        "error": f"Invoking `{name}()` failed as no tool with that name is available. The tools you can call "
        f"are: {', '.join(tools)}. You could retry, but it is IMPORTANT that you only call a tool from that list."
    }


Confirmations = dict[str, tuple[types.FunctionCall, ToolConfirmation | None, str]]
"""Original call id -> (the call, the person's answer, the id of the confirmation call it answered). An
AgentTool call whose agent paused runs again with no answer of its own, keyed by the client message that
answered the agent's calls (see ``agent_tool_pause``)."""


async def run_calls(
    agent: LlmAgent, ctx: InvocationContext, calls: list[types.FunctionCall], tools: dict[str, BaseTool],
    confirmations: Confirmations | None = None,
) -> list[Event]:
    """Run ``calls`` (concurrently when several) and merge their answers into one event, parts in call order.

    Long-running tools that return None add no part; when no call has an answer there is no answer event.
    A crashing tool fails the invocation: the answers of the other calls come first, then an error event.
    Calls held for a person's confirmation add an ``adk_request_confirmation`` event (see ``confirmation``);
    calls that asked for a user's credential add an ``adk_request_credential`` event (see ``runtime.auth``);
    ``confirmations`` carries the answers when held calls run again. An AgentTool call whose agent pauses
    gets no answer but a proxy event, last (see ``agent_tool_pause``).
    """
    confirmations = confirmations or {}
    if len(calls) == 1:
        answers = [await _run_one(agent, ctx, calls[0], tools, confirmations.get(calls[0].id))]
    else:
        answers = await asyncio.gather(
            *(_run_one(agent, ctx, call, tools, confirmations.get(call.id)) for call in calls)
        )
    crashed = next(((call.name, crash) for call, (_, _, crash) in zip(calls, answers, strict=True)
                    if crash is not None), None)
    answers, paused = agent_tool_pause.set_aside(ctx, agent.name, calls, answers)
    events = []
    parts = [part for answer_parts, _, _ in answers for part in answer_parts]
    if parts:
        actions = [a for answer_parts, a, _ in answers if answer_parts]
        events.append(_fast.event(
            invocation_id=ctx.invocation_id,
            author=agent.name,
            branch=ctx.branch,
            content=_fast.content("user", parts),
            actions=actions[0] if len(actions) == 1 else merge_actions(actions),
        ))
        answer = events[-1]
        requests = answer.actions.requested_tool_confirmations
        if requests:
            events = _with_confirmation_request(ctx, agent.name, calls, answer, requests)
        if answer.actions.requested_auth_configs:
            # first, as google-adk 2.13 commits it; the invocation then ends and parks on the request
            request = credential_requests.request_event(
                ctx, agent.name, answer.actions.requested_auth_configs, answer.content.role)
            await credential_requests.hold_requests(ctx, request)
            events.insert(0, request)
            ctx.end_invocation = True
    events.extend(paused)  # long-running, so final: they end the step
    if crashed is not None:
        ctx.run.failed = True
        events.append(failures.error_event(ctx, agent.name, crashed[1], tool=crashed[0]))
    return events


def _with_confirmation_request(ctx, author, calls, answer: Event, requests) -> list[Event]:
    """The answer event and the confirmation request, in the order google-adk 2.13 commits them.

    Some answers settled: the answer (settled ones and "waiting" ones), then the request, which is long-running
    and so ends the step. Every answer waiting: the answer carries ``skip_summarization`` (no model call follows)
    and the request is committed first, yet made after the answer: as in google-adk, the answer's timestamp is
    the earlier one (a session store that lists events by timestamp, as ADK's SQLite one does, shows the answer
    first)."""
    request = confirmation.request_event(ctx, author, calls, requests)
    responses = answer.get_function_responses()
    if not all(response.id in requests for response in responses):
        answer.actions.skip_summarization = None
        return [answer, request]
    answer.actions.skip_summarization = True
    return [request, answer]


def merge_actions(all_actions: list[EventActions]) -> EventActions:
    """Actions of several tool calls as one: dicts merged, widget lists joined, later scalars win."""
    merged = EventActions()
    for actions in all_actions:
        merged.state_delta.update(actions.state_delta)
        merged.artifact_delta.update(actions.artifact_delta)
        merged.requested_auth_configs.update(actions.requested_auth_configs)
        merged.requested_tool_confirmations.update(actions.requested_tool_confirmations)
        if actions.render_ui_widgets:  # every call's widgets, in call order (ADK does not deduplicate them)
            merged.render_ui_widgets = [*(merged.render_ui_widgets or []), *actions.render_ui_widgets]
        for name in ("skip_summarization", "transfer_to_agent", "escalate"):
            value = getattr(actions, name)
            if value is not None:
                setattr(merged, name, value)
    return merged


async def _run_one(
    agent: LlmAgent, ctx: InvocationContext, call: types.FunctionCall, tools: dict[str, BaseTool],
    confirmed: tuple[types.FunctionCall, ToolConfirmation | None, str] | None = None,
) -> tuple[list[types.Part], EventActions, Exception | None]:
    """The parts answering ``call`` (none while a long-running tool has nothing yet), its actions, its crash."""
    tool_context = ToolContext(ctx, function_call_id=call.id, tool_confirmation=confirmed and confirmed[1])
    # A confirmed run is a new attempt at the call, journaled on its own: the held attempt is 'completed'
    # (answered "requires confirmation"), and each confirmation answer may run the tool at most once.
    journal_id = call.id if confirmed is None else f"{call.id}@{confirmed[2]}"
    tool = tools.get(call.name)
    if tool is None:
        response: Any = unknown_tool_error(call.name, tools)
    else:
        span = steps.tool_call_started(ctx, call, tool) if ctx.run.spans else None
        try:
            response = await _journaled(agent, ctx, tool, call, tool_context, journal_id)
        except BaseException:  # cancelled, a lost lease: the span ends here, the run's spans say where
            steps.tool_call_ended(span)
            raise
        if isinstance(response, _Crash):
            steps.tool_call_ended(span, error=response.error)
            # the one place the traceback is still at hand: the invocation then fails on an error event
            log.error("invocation %s: tool %r raised %s", ctx.invocation_id, tool.name, type(response.error).__name__,
                      exc_info=response.error)
            return [], tool_context.actions, response.error
        steps.tool_call_ended(span, response)
        if tool.is_long_running and not response:  # nothing yet: the client will answer later
            return [], tool_context.actions, None
        paused = agent_tool_pause.paused_calls(response)
        if paused is not None:  # an AgentTool's agent waits for a client: no answer yet, see set_aside
            return agent_tool_pause.proxy_parts(paused), tool_context.actions, None
    shown = response
    if not isinstance(response, dict):
        response = {"result": response}
    parts = [_fast.function_response_part(call.id, call.name, response)]
    if tool_context.actions.skip_summarization and tool.answers_as_agent:
        text = _display_text(shown, response)
        if text is not None:  # the agent's answer stays visible to UIs that do not render function responses
            parts.append(types.Part(text=text))
    return parts, tool_context.actions, None


def _display_text(result: Any, response: dict[str, Any]) -> str | None:
    if "error" in response or result is None or result == "" or result == {"result": None}:
        return None
    return result if isinstance(result, str) else json.dumps(result, ensure_ascii=False, default=str)


class _Crash:
    """What a tool raised (kept apart from results so it is never journaled or sent to the model)."""

    __slots__ = ("error",)

    def __init__(self, error: Exception):
        self.error = error


async def _journaled(agent, ctx, tool, call, tool_context, journal_id) -> Any:
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
        response, stopped = await _invoke_to_the_end(agent, tool, call, tool_context)
        # not a paused AgentTool's answer: no response event will clear it, and its next run must resume
        if not isinstance(response, _Crash) and not agent_tool_pause.is_paused(response):
            ctx.run.uncommitted[key] = (response, tool_context.actions)
        if stopped:
            raise asyncio.CancelledError
        return response
    previous = await journal.begin(ctx.invocation_id, journal_id, tool.name)
    if previous is not None and previous.status == "completed":
        return _reused(previous.response, tool_context)
    stopped = False
    if previous is not None and not tool.idempotent:
        response: Any = in_doubt_error(tool.name)
    else:
        response, stopped = await _invoke_to_the_end(agent, tool, call, tool_context)
    if isinstance(response, _Crash):  # not completed: the journal keeps it in doubt
        if stopped:
            raise asyncio.CancelledError
        return response
    if tool.is_long_running and not response:
        stored = NO_RESPONSE
    else:
        stored = response if isinstance(response, dict) else {"result": response}
    requests = tool_context.actions.requested_tool_confirmations
    if requests:  # kept with the answer: a reused answer must still ask for its confirmation
        stored = {**stored, _CONFIRMATIONS_KEY: {k: v.model_dump(mode="json") for k, v in requests.items()}}
    if tool_context.actions.requested_auth_configs:  # and for the credential (redacted: the journal is stored)
        stored = {**stored, _AUTH_CONFIGS_KEY: dict(tool_context.actions.requested_auth_configs)}
    await journal.complete(ctx.invocation_id, journal_id, stored)
    if stopped:
        raise asyncio.CancelledError
    return response


async def _invoke_to_the_end(agent, tool, call, tool_context) -> tuple[Any, bool]:
    """The tool's outcome, and whether this task was cancelled while it ran.

    A sync function tool runs on a thread, which nothing can stop: its side effect happens even if the run is
    cancelled meanwhile (a stopped ParallelAgent branch, a worker giving an invocation up). So a cancelled caller
    waits for the thread and keeps the answer (journaled, or held until committed) before it stops; a resumed run
    then reuses it instead of calling the tool a second time. Other tools are cancelled as usual."""
    if not getattr(tool, "runs_on_a_thread", False):
        return await _invoke(agent, tool, call, tool_context), False
    running = asyncio.ensure_future(_invoke(agent, tool, call, tool_context))
    stopped = False
    while True:
        try:
            return await asyncio.shield(running), stopped
        except asyncio.CancelledError:
            if running.cancelled():
                raise
            stopped = True


_CONFIRMATIONS_KEY = "agentq:requested_tool_confirmations"
_AUTH_CONFIGS_KEY = "agentq:requested_auth_configs"


def _reused(stored: dict[str, Any], tool_context: ToolContext) -> Any:
    """A completed call's journaled answer, with the confirmation and credential requests it made restored (the
    invocation still parks on a reused credential request; its full config died with the process that ran the
    tool, so it is not held for the API, whose sign-in link then says so)."""
    if stored == NO_RESPONSE:
        return None
    if _CONFIRMATIONS_KEY in stored:
        stored = dict(stored)
        for call_id, request in stored.pop(_CONFIRMATIONS_KEY).items():
            tool_context.actions.requested_tool_confirmations[call_id] = ToolConfirmation.model_validate(request)
    if _AUTH_CONFIGS_KEY in stored:
        stored = dict(stored)
        tool_context.actions.requested_auth_configs.update(stored.pop(_AUTH_CONFIGS_KEY))
    return stored


async def _invoke(agent, tool, call, tool_context) -> Any:
    """Callbacks around the tool, the plugins' before the agent's own (which a plugin's answer skips); a crash
    that no on_tool_error plugin answers is returned as a _Crash (the invocation then fails)."""
    args = copy.deepcopy(call.args) if call.args else {}  # the committed call must not change under the tool
    plugins = tool_context.invocation_context.plugin_manager
    try:
        response = None
        if plugins.has_callback("before_tool_callback"):
            response = await plugins.run_before_tool_callback(tool=tool, tool_args=args, tool_context=tool_context)
        if response is None and agent.before_tool_callback:  # skipped when absent: a coroutine per call for nothing
            response = await first_answer(agent.before_tool_callback, tool=tool, args=args, tool_context=tool_context)
        if response is None:
            try:
                response = await confirmation.gate(tool, args, tool_context)
                if response is None:
                    response = await tool.run_async(args=args, tool_context=tool_context)
            except Exception as exc:
                # what the tool raised, not infrastructure (a lost lease): only that may a plugin answer for
                if not failures.is_reportable(exc) or not plugins.has_callback("on_tool_error_callback"):
                    raise
                response = await plugins.run_on_tool_error_callback(
                    tool=tool, tool_args=args, tool_context=tool_context, error=exc)
                if response is None:
                    raise
        if agent_tool_pause.is_paused(response):
            return response  # the agent has not answered yet: the after-tool callbacks see its answer then
        altered = None
        if plugins.has_callback("after_tool_callback"):
            altered = await plugins.run_after_tool_callback(
                tool=tool, tool_args=args, tool_context=tool_context, result=response)
        if altered is None and agent.after_tool_callback:
            altered = await first_answer(
                agent.after_tool_callback, tool=tool, args=args, tool_context=tool_context, tool_response=response
            )
    except Exception as exc:
        if not failures.is_reportable(exc):
            raise
        return _Crash(exc)
    return response if altered is None else altered
