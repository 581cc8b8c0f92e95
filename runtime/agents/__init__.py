"""Agents (``google.adk.agents`` in ADK): the model-driven LlmAgent and the workflow agents."""

from ..contexts.callback_context import CallbackContext
from ..contexts.invocation_context import InvocationContext
from ..contexts.readonly_context import ReadonlyContext
from ..contexts.run_config import RunConfig, StreamingMode
from ..errors import NotSupportedYetError
from .base_agent import BaseAgent
from .llm_agent import Agent, LlmAgent
from .loop_agent import LoopAgent
from .parallel_agent import ParallelAgent
from .sequential_agent import SequentialAgent

__all__ = [
    "Agent",
    "BaseAgent",
    "CallbackContext",
    "InvocationContext",
    "LlmAgent",
    "LoopAgent",
    "ParallelAgent",
    "ReadonlyContext",
    "RunConfig",
    "SequentialAgent",
    "StreamingMode",
]

# Names google-adk 2.13 exports from google.adk.agents that agentq does not provide yet: importing one fails
# naming it (NotSupportedYetError), so an agent moved over from ADK stops at its import, not later.
_NOT_SUPPORTED_YET = frozenset({
    "BaseAgentConfig", "Context", "LiveRequest", "LiveRequestQueue", "LlmAgentConfig", "LoopAgentConfig",
    "ManagedAgent", "McpInstructionProvider", "ParallelAgentConfig", "SequentialAgentConfig",
})


def __getattr__(name: str):
    if name in _NOT_SUPPORTED_YET:
        raise NotSupportedYetError(__name__, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
