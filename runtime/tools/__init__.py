"""Tools (``google.adk.tools`` in ADK): functions, long-running functions, agents as tools, control tools."""

from .agent_tool import AgentTool
from .base_tool import BaseTool
from .exit_loop_tool import exit_loop
from .function_tool import FunctionTool
from .long_running_tool import LongRunningFunctionTool
from .request_input_tool import request_input
from .tool_confirmation import ToolConfirmation
from .tool_context import ToolContext
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
