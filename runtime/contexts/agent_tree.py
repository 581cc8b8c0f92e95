"""An invocation's agent tree, indexed by name (transfers and resumption find agents by name)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..errors import InvalidAgentTreeError

if TYPE_CHECKING:
    from ..agents.base_agent import BaseAgent


def index_tree(root: BaseAgent) -> dict[str, BaseAgent]:
    """Every agent of the tree by name; names must be unique because transfers and resumption use them."""
    index: dict[str, BaseAgent] = {}
    stack = [root]
    while stack:
        agent = stack.pop()
        if agent.name in index:
            raise InvalidAgentTreeError(f"agent name {agent.name!r} appears twice in the tree of {root.name!r}")
        index[agent.name] = agent
        stack.extend(agent.sub_agents)
    return index
