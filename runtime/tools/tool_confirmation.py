"""``google.adk.tools.tool_confirmation``: the ToolConfirmation model (defined in ``runtime.events``)."""

from ..events.tool_confirmation import REQUEST_CONFIRMATION_FUNCTION_CALL_NAME, ToolConfirmation

__all__ = ["REQUEST_CONFIRMATION_FUNCTION_CALL_NAME", "ToolConfirmation"]
