"""Turning what a user puts in ``edges`` (a function, an agent, a tool, a node) into a node."""

from __future__ import annotations

from typing import Any

from .base_node import START, BaseNode
from .errors import WorkflowConfigurationError
from .retry_config import RetryConfig


def build_node(node_like: Any, *, name: str | None = None, rerun_on_resume: bool | None = None,
               retry_config: RetryConfig | None = None, timeout: float | None = None) -> BaseNode:
    """The node for ``node_like``: a BaseNode as it is (a copy when a setting is overridden), an agent as an
    agent node, a tool as a tool node, any other callable as a FunctionNode."""
    from ..agents.base_agent import BaseAgent
    from ..tools.base_tool import BaseTool
    from .agent_node import AgentNode
    from .function_node import FunctionNode
    from .tool_node import ToolNode

    if node_like == "START" or node_like is START:
        return START
    overrides = {key: value for key, value in (("name", name), ("rerun_on_resume", rerun_on_resume),
                                               ("retry_config", retry_config), ("timeout", timeout))
                 if value is not None}
    if isinstance(node_like, BaseNode):
        return node_like.model_copy(update=overrides) if overrides else node_like
    if isinstance(node_like, BaseAgent):
        return AgentNode(agent=node_like, **{"rerun_on_resume": True, **overrides})
    if isinstance(node_like, BaseTool):
        return ToolNode(tool=node_like, **overrides)
    if callable(node_like):
        return FunctionNode(func=node_like, **overrides)
    raise WorkflowConfigurationError(
        f"{node_like!r} (type {type(node_like).__name__}) cannot be a workflow node: use a function, an agent, "
        "a tool or a BaseNode")
