"""Tools (``google.adk.tools`` in ADK): functions, long-running functions, agents as tools, control tools.

``AgentTool`` loads lazily: it runs a Runner, which imports the agents and flows that import the tools here.
"""

from ..contexts.tool_context import ToolContext
from .base_tool import BaseTool
from .exit_loop_tool import exit_loop
from .function_tool import FunctionTool
from .long_running_tool import LongRunningFunctionTool
from .request_input_tool import request_input
from .tool_confirmation import ToolConfirmation
from .tool_journal import BaseToolJournal, InMemoryToolJournal, ToolCallRecord
from .transfer_to_agent_tool import transfer_to_agent

__all__ = [
    "AgentTool",
    "BaseTool",
    "BaseToolJournal",
    "FunctionTool",
    "InMemoryToolJournal",
    "LongRunningFunctionTool",
    "ToolCallRecord",
    "ToolConfirmation",
    "ToolContext",
    "exit_loop",
    "request_input",
    "transfer_to_agent",
]


def __getattr__(name: str):
    if name == "AgentTool":
        from .agent_tool import AgentTool

        return AgentTool
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
