"""Plugins (``google.adk.plugins`` in ADK): callbacks a Runner applies to every agent, model and tool call.

Give them as ``App(plugins=[...])`` or ``Runner(plugins=[...])``; a worker serving the App runs them too.
"""

from .base_plugin import BasePlugin
from .logging_plugin import LoggingPlugin
from .plugin_manager import PluginManager

__all__ = ["BasePlugin", "LoggingPlugin", "PluginManager"]
