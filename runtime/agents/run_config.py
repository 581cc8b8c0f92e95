"""``RunConfig`` where ADK has it (``google.adk.agents.run_config``); it lives in ``runtime.contexts``."""

from ..contexts.run_config import RunConfig, StreamingMode

__all__ = ["RunConfig", "StreamingMode"]
