"""How an LlmAgent is reached by its parent: ``chat`` (transfer_to_agent), ``task`` or ``single_turn``
(called like a tool, the result coming back to the caller).

A delegated agent runs on a branch of its own, ``<name>@<call id>`` below the caller's branch, as ADK names
it. That branch is also its *scope*: an agent sees only the events of its own scope, so the caller never sees
the task's conversation and the task sees nothing of the caller's (see ``scope_of`` and
``flows.contents``). Lives with the flows, not the agents, because the flows and the routing both ask it.
"""

from __future__ import annotations

import enum
from typing import TYPE_CHECKING, Literal, TypeAlias

from ..errors import InvalidAgentConfigError

if TYPE_CHECKING:
    from ..agents.base_agent import BaseAgent


class AgentMode(enum.StrEnum):
    """The delegation mode of an LlmAgent; members equal, print and serialise as their plain strings."""

    CHAT = "chat"
    """Reached through transfer_to_agent; talks with the user until it transfers away."""

    TASK = "task"
    """Called like a tool; may talk with the user over several turns, ends with its finish_task tool."""

    SINGLE_TURN = "single_turn"
    """Called like a tool; answers from its input alone, without waiting for the user."""


LlmAgentMode: TypeAlias = Literal["chat", "task", "single_turn"] | AgentMode
"""What ``LlmAgent(mode=...)`` accepts (None, the default, means chat for a sub-agent)."""

DELEGATED_TASK_MODES: frozenset[str] = frozenset({AgentMode.TASK, AgentMode.SINGLE_TURN})
"""The modes whose agents are called like tools rather than transferred to."""


def mode_of(agent: BaseAgent | None) -> str | None:
    """``agent``'s mode as a plain string (None for agents without one)."""
    mode = getattr(agent, "mode", None)
    return None if mode is None else str(mode)


def is_delegated(agent: BaseAgent | None) -> bool:
    """True for an agent its parent calls like a tool (task or single_turn)."""
    return mode_of(agent) in DELEGATED_TASK_MODES


def delegator_of(agent: BaseAgent) -> BaseAgent:
    """The agent that owns the turn when ``agent`` speaks: for an agent inside a delegation (it, or one of
    its ancestors, is a task or single_turn agent), the parent of the outermost delegated one. The
    delegator then resumes the open task itself, so its result comes back to it."""
    owner = agent
    current = agent
    while current.parent_agent is not None:
        if is_delegated(current):
            owner = current.parent_agent
        current = current.parent_agent
    return owner


def refuse_single_turn_root(root: BaseAgent) -> None:
    """A single_turn agent has nobody to report to when it is the root (ADK's wording)."""
    if mode_of(root) == AgentMode.SINGLE_TURN:
        raise InvalidAgentConfigError(
            f"LlmAgent as root agent must have mode='chat' or 'task', but got mode='{mode_of(root)}'."
        )


def scope_branch(base: str | None, agent_name: str, call_id: str) -> str:
    """The branch a delegated agent runs on for call ``call_id``: ``<name>@<call id>`` below ``base``."""
    segment = f"{agent_name}@{call_id}"
    return f"{base}.{segment}" if base else segment


def scope_of(branch: str | None) -> str | None:
    """The delegation a branch lies in: its prefix up to the last ``name@id`` segment (None outside any).

    Agent names are identifiers, so ``@`` appears only in delegation segments."""
    if not branch:
        return None
    at = branch.rfind("@")
    if at < 0:
        return None
    end = branch.find(".", at)
    return branch if end < 0 else branch[:end]


def delegation_call_id(branch: str | None) -> str | None:
    """The id of the call that opened the delegation ``branch`` lies in (None outside any)."""
    scope = scope_of(branch)
    return None if scope is None else scope[scope.rfind("@") + 1:]
