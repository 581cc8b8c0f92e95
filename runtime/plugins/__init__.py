"""Plugins (``google.adk.plugins`` in ADK): callbacks a Runner applies to every agent, model and tool call.

Give them as ``App(plugins=[...])`` or ``Runner(plugins=[...])``; a worker serving the App runs them too.
"""

from ..errors import NotSupportedYetError
from .base_plugin import BasePlugin
from .logging_plugin import LoggingPlugin
from .plugin_manager import PluginManager

__all__ = ["BasePlugin", "LoggingPlugin", "PluginManager"]

# Names google-adk 2.13 exports from google.adk.plugins that agentq does not provide yet: importing one fails
# naming it (NotSupportedYetError), so an agent moved over from ADK stops at its import, not later.
_NOT_SUPPORTED_YET = frozenset({
    "DebugLoggingPlugin", "ForceEscalationPlugin", "ModelConsultObservabilityPlugin", "ReflectAndRetryModelPlugin",
    "ReflectAndRetryToolPlugin", "ToolCallIntegrityError", "ToolCallIntegrityPlugin", "ToolResultClassification",
    "ToolResultClassifier",
})


def __getattr__(name: str):
    if name in _NOT_SUPPORTED_YET:
        raise NotSupportedYetError(__name__, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
