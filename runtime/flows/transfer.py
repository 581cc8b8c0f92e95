"""Which agent a ``transfer_to_agent`` call may hand over to: a sub-agent, the parent or a peer, as allowed."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..errors import TransferNotAllowedError

if TYPE_CHECKING:
    from ..agents.base_agent import BaseAgent
    from ..contexts.invocation_context import InvocationContext


def _child(agent: BaseAgent | None, name: str) -> BaseAgent | None:
    if agent is None:
        return None
    return next((sub_agent for sub_agent in agent.sub_agents if sub_agent.name == name), None)


def transfer_target(agent: BaseAgent, name: str, ctx: InvocationContext) -> BaseAgent:
    """The agent ``agent`` hands over to; TransferNotAllowedError when the tree or its flags forbid it."""
    if name == agent.name:
        raise TransferNotAllowedError(f"Agent {name!r} cannot transfer to itself.")
    child = _child(agent, name)
    if child is not None:
        return child
    parent = agent.parent_agent
    if parent is not None and parent.name == name:
        if getattr(agent, "disallow_transfer_to_parent", False):
            raise TransferNotAllowedError(
                f"Cannot transfer from {agent.name!r} to parent agent {name!r}: disallow_transfer_to_parent is set."
            )
        return parent
    peer = _child(parent, name)
    if peer is not None:
        if getattr(agent, "disallow_transfer_to_peers", False):
            raise TransferNotAllowedError(
                f"Cannot transfer from {agent.name!r} to peer agent {name!r}: disallow_transfer_to_peers is set."
            )
        return peer
    ctx.find_agent(name)  # AgentNotFoundError when it is in no part of the tree
    raise TransferNotAllowedError(
        f"Cannot transfer from {agent.name!r} to unrelated agent {name!r}.\n"
        f"Available agents: {', '.join(_names(agent.root_agent))}"
    )


def _names(root: BaseAgent) -> list[str]:
    names = [root.name]
    for sub_agent in root.sub_agents:
        names.extend(_names(sub_agent))
    return names


