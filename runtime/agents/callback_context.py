"""``CallbackContext`` where ADK has it (``google.adk.agents.callback_context``); it lives in ``runtime.contexts``."""

from ..contexts.callback_context import CallbackContext

__all__ = ["CallbackContext"]
