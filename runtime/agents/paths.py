"""The ``nodeInfo.path`` google-adk 2.13 writes on an agent's events, outside a workflow graph.

google-adk runs a root LlmAgent as a node (``weather@1``); an agent handed the turn by a transfer runs as a node
under its tree's ancestors, each at run 1 (``desk@1/billing@1``), numbered by how often that path started in
this run (``desk@2`` when the turn comes back); a task agent runs under its delegator, numbered by the call that
opened it (``coord@1/booker@<call id>``). A Sequential, Loop or Parallel agent's children write their parent's
path, and a workflow agent the Runner starts has none (``""``), like the user's messages.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..flows.agent_modes import delegation_call_id, is_delegated

if TYPE_CHECKING:
    from ..contexts.invocation_context import InvocationContext
    from .base_agent import BaseAgent


def agent_path(agent: BaseAgent, parent_context: InvocationContext, ctx: InvocationContext) -> str:
    """The path of ``agent``'s events when it runs in ``ctx``, started from ``parent_context``."""
    if ctx.node_path is not None:  # a workflow graph's node: the graph numbered its run
        return ctx.node_path
    starter = parent_context.agent
    if starter is not agent and not starter.runs_as_node and agent.parent_agent is starter:
        return parent_context.agent_path  # a workflow agent's child
    static = "/".join(f"{ancestor.name}@1" for ancestor in reversed(_ancestors(agent)))
    if starter is not agent and is_delegated(agent):
        return f"{parent_context.agent_path or static}/{agent.name}@{delegation_call_id(ctx.branch)}"
    if starter is agent and not agent.runs_as_node:
        return ""  # google-adk's Runner starts a workflow agent outside its node runtime
    key = f"{static}/{agent.name}" if static else agent.name
    run = ctx.run.agent_runs[key] = ctx.run.agent_runs.get(key, 0) + 1
    return f"{key}@{run}"


def _ancestors(agent: BaseAgent) -> list[BaseAgent]:
    ancestors = []
    parent = agent.parent_agent
    while parent is not None:
        ancestors.append(parent)
        parent = parent.parent_agent
    return ancestors
