"""Reading an invocation's committed events to find where each agent stopped.

Workflow agents commit a checkpoint (``actions.agent_state``) before each sub-agent they start, and
``end_of_agent`` when they finish. An agent's *window* is the part of the invocation after the latest
checkpoint of any of its ancestors: what the agent did in its current run (a loop iteration, a sequence step).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..events import Event

if TYPE_CHECKING:
    from ..agents.base_agent import BaseAgent
    from .invocation_context import InvocationContext


def _ancestor_names(agent: BaseAgent) -> set[str]:
    names = set()
    parent = agent.parent_agent
    while parent is not None:
        names.add(parent.name)
        parent = parent.parent_agent
    return names


def node_run_events(events: list[Event], node_path: str) -> list[Event]:
    """A workflow node run's own events (``node_info.path``) and the user's answers to the calls they made: all
    an agent running as that node did in its run (a node run again in a loop starts afresh)."""
    mine = [event for event in events if event.node_info is not None and event.node_info.path == node_path]
    calls = {call.id for event in mine for call in event.get_function_calls()}
    if not calls:
        return mine
    return [event for event in events
            if (event.node_info is not None and event.node_info.path == node_path)
            or (event.author == "user" and any(r.id in calls for r in event.get_function_responses()))]


def window(ctx: InvocationContext, agent: BaseAgent) -> list[Event]:
    """The invocation's committed events after the latest checkpoint of one of ``agent``'s ancestors; for an
    agent running as a workflow node, its node run's events."""
    events = ctx.run.events
    if ctx.node_path is not None:
        return node_run_events(events, ctx.node_path)
    ancestors = _ancestor_names(agent)
    if ancestors:
        for index in range(len(events) - 1, -1, -1):
            event = events[index]
            if event.actions.agent_state is not None and event.author in ancestors:
                return events[index + 1 :]
    return events


def has_started(ctx: InvocationContext, agent: BaseAgent) -> bool:
    """True when ``agent`` already committed an event in its current run."""
    return any(event.author == agent.name for event in window(ctx, agent))


def workflow_progress(ctx: InvocationContext, agent: BaseAgent) -> tuple[dict[str, Any] | None, bool]:
    """(latest checkpoint, finished) of a workflow agent's current run; (None, False) when it has not started."""
    state: dict[str, Any] | None = None
    ended = False
    if not ctx.run.resumed:
        return state, ended
    for event in window(ctx, agent):
        if event.author != agent.name:
            continue
        if event.actions.end_of_agent:
            ended = True
        elif event.actions.agent_state is not None:
            state, ended = event.actions.agent_state, False
    return state, ended


def escalated_since_checkpoint(ctx: InvocationContext, agent: BaseAgent) -> bool:
    """True when an event after ``agent``'s latest checkpoint asked to escalate."""
    for event in reversed(ctx.run.events):
        if event.author == agent.name and event.actions.agent_state is not None:
            return False
        if event.actions.escalate:
            return True
    return False
