"""transfer_to_agent: the tool an LlmAgent calls to hand the conversation to another agent."""

from __future__ import annotations

from ..contexts.tool_context import ToolContext


def transfer_to_agent(agent_name: str, tool_context: ToolContext) -> None:
    """Transfer the question to another agent.

    This tool hands off control to another agent when it's more suitable to answer the user's question
    according to the agent's description.

    Args:
      agent_name: the agent name to transfer to.
    """
    tool_context.actions.transfer_to_agent = agent_name
