"""Tools (``google.adk.tools`` in ADK): functions, long-running functions, agents as tools, control tools.

``AgentTool`` loads lazily: it runs a Runner, which imports the agents and flows that import the tools here.
"""

from ..contexts.tool_context import ToolContext
from ..errors import NotSupportedYetError
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


# Names google-adk 2.13 exports from google.adk.tools that agentq does not provide yet: importing one fails
# naming it (NotSupportedYetError), so an agent moved over from ADK stops at its import, not later.
_NOT_SUPPORTED_YET = frozenset({
    "APIHubToolset", "ApiRegistry", "AuthToolArguments", "DiscoveryEngineSearchTool", "ExampleTool", "MCPToolset",
    "McpToolset", "ModelConsultContextConfig", "ModelConsultTool", "RemoteMcpServer", "SearchResultMode",
    "TransferToAgentTool", "VertexAiLoadProfilesTool", "VertexAiSearchTool", "enterprise_web_search",
    "get_user_choice", "google_maps_grounding", "google_search", "load_artifacts", "load_memory", "preload_memory",
    "url_context",
})


def __getattr__(name: str):
    if name == "AgentTool":
        from .agent_tool import AgentTool

        return AgentTool
    if name in _NOT_SUPPORTED_YET:
        raise NotSupportedYetError(__name__, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
