"""ADK 2's graph workflows (``google.adk.workflow``), durable node by node on agentq's workers.

``Workflow(name=..., edges=[(START, fetch, draft, review, publish)])`` runs functions, agents, tools and other
workflows as nodes; see ``workflow`` for the loop, ``executor`` for one node run, ``history`` for how committed
events are the checkpoints.
"""

from .base_node import START, BaseNode
from .errors import (
    GraphValidationError,
    NodeTimeoutError,
    WorkflowConfigurationError,
    WorkflowDataError,
)
from .function_node import FunctionNode
from .graph import DEFAULT_ROUTE, Edge, Graph
from .join_node import JoinNode
from .node import Node, node
from .retry_config import RetryConfig
from .workflow import Workflow

__all__ = [
    "DEFAULT_ROUTE",
    "START",
    "BaseNode",
    "Edge",
    "FunctionNode",
    "Graph",
    "GraphValidationError",
    "JoinNode",
    "Node",
    "NodeTimeoutError",
    "RetryConfig",
    "Workflow",
    "WorkflowConfigurationError",
    "WorkflowDataError",
    "node",
]
