"""``ReadonlyContext`` where ADK has it (``google.adk.agents.readonly_context``); it lives in ``runtime.contexts``."""

from ..contexts.readonly_context import ReadonlyContext

__all__ = ["ReadonlyContext"]
