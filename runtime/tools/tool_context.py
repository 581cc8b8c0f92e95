"""``ToolContext`` where ADK has it (``google.adk.tools.tool_context``); it lives in ``runtime.contexts``."""

from ..contexts.tool_context import ToolContext

__all__ = ["ToolContext"]
