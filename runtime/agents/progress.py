"""Where a workflow agent (Sequential, Loop, Parallel) is in its run: committed, or kept in the tool journal.

google-adk 2.13 commits a workflow agent's checkpoints (``agent_state`` before each sub-agent, ``end_of_agent``
at the end) only in a resumable app. agentq's workers run every app durably (a tool journal: a crashed or
parked invocation resumes where it stopped), resumable or not, and a resumed Loop needs its iteration count.
So on a durable runner that is not ADK-resumable the checkpoint is *private*: it is recorded in the run's
events (the agents below read their progress there, as from committed ones) and in the tool journal, under
``agentq:progress:<agent name>``, but it is not committed to the session. A resumed run puts each workflow
agent's latest private checkpoint back into its events, after the committed event it followed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..events import Event, EventActions

if TYPE_CHECKING:
    from ..contexts.invocation_context import InvocationContext, InvocationRun
    from ..tools.tool_journal import BaseToolJournal
    from .base_agent import BaseAgent

PROGRESS_PREFIX = "agentq:progress:"
"""Journal entries holding a workflow agent's latest private checkpoint (never a tool call id: ADK's are
``adk-<uuid>``, models' have no colon prefix like this)."""

PRIVATE = "agentq:private_checkpoint"
"""``custom_metadata`` key marking a checkpoint event that is only in the run's memory, not in the session."""


def is_private(event: Event) -> bool:
    """True for a checkpoint this module recorded in the run's events without committing it."""
    return bool(event.custom_metadata) and PRIVATE in event.custom_metadata


async def keep_private(ctx: InvocationContext, event: Event) -> None:
    """Record ``event`` (a workflow agent's checkpoint) in the run's events and in the tool journal, uncommitted.

    The journal write is ordered before the next committed event (``BaseToolJournal.complete``'s contract), so a
    run that resumes after any later commit finds it."""
    anchor = next((e.id for e in reversed(ctx.run.events) if not is_private(e)), None)
    event.custom_metadata = {PRIVATE: True}
    ctx.run.events.append(event)
    record: dict[str, Any] = {"after": anchor, "agent_state": event.actions.agent_state,
                              "end_of_agent": bool(event.actions.end_of_agent), "branch": event.branch}
    await ctx.tool_journal.complete(ctx.invocation_id, PROGRESS_PREFIX + event.author, record)


async def restore_private(run: InvocationRun, journal: BaseToolJournal, invocation_id: str,
                          agents: dict[str, BaseAgent]) -> None:
    """Put the latest private checkpoint of each workflow agent of the tree back into ``run.events`` (a resumed
    run), each right after the committed event it followed, an ancestor's before its descendants'."""
    workflow_agents = [agent for agent in agents.values() if agent.keeps_progress]
    for agent in sorted(workflow_agents, key=_depth):
        kept = await journal.get(invocation_id, PROGRESS_PREFIX + agent.name)
        if kept is None or kept.response is None:
            continue
        record = kept.response
        event = Event(invocation_id=invocation_id, author=agent.name, branch=record.get("branch"),
                      actions=EventActions(agent_state=record.get("agent_state"),
                                           end_of_agent=record.get("end_of_agent") or None),
                      custom_metadata={PRIVATE: True})
        run.events.insert(_position_after(run.events, record.get("after")), event)


def _position_after(events: list[Event], anchor: str | None) -> int:
    """The index just after the committed event ``anchor`` and the private checkpoints already following it."""
    index = 0
    if anchor is not None:
        index = next((i + 1 for i, e in enumerate(events) if e.id == anchor and not is_private(e)), len(events))
    while index < len(events) and is_private(events[index]):
        index += 1
    return index


def _depth(agent: BaseAgent) -> int:
    depth, parent = 0, agent.parent_agent
    while parent is not None:
        depth, parent = depth + 1, parent.parent_agent
    return depth
