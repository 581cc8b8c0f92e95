"""The running invocation as agents, flows, tools and callbacks see it.

The contexts (``InvocationContext`` and the views handed to user code: ``ReadonlyContext``, ``CallbackContext``,
``ToolContext``), the per-run settings (``RunConfig``) and the helpers that read a run (callback chains,
failure events, checkpoints). This package sits below tools, flows and agents, which all use it; it never
imports them (their types appear in annotations only). ADK's paths (``runtime.agents.InvocationContext``,
``runtime.tools.ToolContext`` ...) re-export these names.
"""

from .callback_context import CallbackContext
from .invocation_context import InvocationContext, InvocationRun
from .readonly_context import ReadonlyContext
from .run_config import RunConfig, StreamingMode
from .tool_context import ToolContext

__all__ = [
    "CallbackContext",
    "InvocationContext",
    "InvocationRun",
    "ReadonlyContext",
    "RunConfig",
    "StreamingMode",
    "ToolContext",
]
