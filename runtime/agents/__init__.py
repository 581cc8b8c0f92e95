"""Agents (``google.adk.agents`` in ADK): the model-driven LlmAgent and the workflow agents."""

from ..contexts.callback_context import CallbackContext
from ..contexts.invocation_context import InvocationContext
from ..contexts.readonly_context import ReadonlyContext
from ..contexts.run_config import RunConfig, StreamingMode
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
