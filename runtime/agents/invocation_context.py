"""``InvocationContext`` where ADK has it (``google.adk.agents.invocation_context``); see ``runtime.contexts``."""

from ..contexts.invocation_context import InvocationContext, InvocationRun

__all__ = ["InvocationContext", "InvocationRun"]
