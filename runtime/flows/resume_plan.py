"""Where a resumed LlmAgent picks up, read from its committed events in the current run window."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from google.genai import types

from ..auth import requests as credential_requests
from ..contexts import resume
from ..events.tool_confirmation import REQUEST_CONFIRMATION_FUNCTION_CALL_NAME
from . import agent_tool_pause, confirmation

if TYPE_CHECKING:
    from ..agents.llm_agent import LlmAgent
    from ..contexts.invocation_context import InvocationContext
    from ..events import Event


_CLIENT_ANSWERED = {REQUEST_CONFIRMATION_FUNCTION_CALL_NAME, credential_requests.REQUEST_CREDENTIAL_FUNCTION_CALL_NAME}


@dataclass(kw_only=True)
class ResumePlan:
    """What to do next: start afresh, call the model, run unanswered calls, hand over, wait, or nothing."""

    kind: Literal["start", "call_model", "run_calls", "transfer", "paused", "finished", "done"]
    """``finished``: its final answer is committed but not its ``end_of_agent``; ``done``: both are."""
    calls: list[types.FunctionCall] = field(default_factory=list)
    target: str = ""
    confirmations: dict = field(default_factory=dict)
    """For ``run_calls`` of calls a person just confirmed or rejected, or of AgentTool calls whose agent's
    calls a client just answered: see ``functions.Confirmations``."""
    credentials: list = field(default_factory=list)
    """For ``run_calls`` of calls that asked for a credential: the answered requests, whose credentials are
    loaded into the run first (``runtime.auth.requests.AnsweredRequest``)."""


def has_ended(agent: LlmAgent, ctx: InvocationContext) -> bool:
    """True when ``agent`` committed its ``end_of_agent`` in its current run (``contexts.resume.window``)."""
    return any(event.author == agent.name and event.actions.end_of_agent for event in resume.window(ctx, agent))


def plan(agent: LlmAgent, ctx: InvocationContext) -> ResumePlan:
    """Decide from the agent's last committed event (and client answers to its calls) how to continue."""
    mine: list[Event] = []
    my_calls: set[str] = set()
    answered: set[str] = set()
    for event in resume.window(ctx, agent):
        if event.author == agent.name:
            mine.append(event)
            my_calls.update(call.id for call in event.get_function_calls())
            answered.update(r.id for r in event.get_function_responses())
        elif event.author == "user":
            ids = {r.id for r in event.get_function_responses()}
            if ids and ids <= my_calls:
                mine.append(event)
                answered.update(ids)
    with_content = [event for event in mine if event.content is not None]
    last = with_content[-1] if with_content else None
    # an agent that handed over ends before its target runs (ADK's resumable shape): the target may not be done
    if last is not None and last.author == agent.name and last.actions.transfer_to_agent:
        return ResumePlan(kind="transfer", target=last.actions.transfer_to_agent)
    if any(event.actions.end_of_agent for event in mine if event.author == agent.name):
        return ResumePlan(kind="done")
    if last is None:
        return ResumePlan(kind="call_model" if mine else "start")
    if last.author == agent.name and last.get_function_calls():
        # calls only a client answers never run here: confirmation requests, a proxy event's (see agent_tool_pause)
        unanswered = [] if agent_tool_pause.is_proxy_event(last) else [
            call for call in last.get_function_calls()
            if call.id not in answered and call.name not in _CLIENT_ANSWERED]
        if unanswered:
            return ResumePlan(kind="run_calls", calls=unanswered)
        return ResumePlan(kind="paused" if ctx.is_paused() else "call_model")
    if last.author == "user":
        own = [event for event in mine if not agent_tool_pause.is_proxy_event(event)]
        confirmations = confirmation.answered(own, last)
        # an AgentTool call whose agent's calls this message answers runs again (journaled once per message)
        for call_id, call in agent_tool_pause.answered(mine, last).items():
            confirmations[call_id] = (call, None, last.id)
        # a call that asked for a credential runs again once its request is answered (journaled per answer)
        credentials, asking = credential_requests.answered(own, last)
        for call_id, call in asking.items():
            confirmations.setdefault(call_id, (call, None, credentials[0].request_id))
        if confirmations:
            return ResumePlan(kind="run_calls", calls=[call for call, _, _ in confirmations.values()],
                              confirmations=confirmations, credentials=credentials)
    if last.get_function_responses():
        if last.author == agent.name and last.actions.skip_summarization:
            return ResumePlan(kind="finished")
        return ResumePlan(kind="call_model")
    return ResumePlan(kind="paused" if ctx.is_paused() else "finished")
