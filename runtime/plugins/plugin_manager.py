"""PluginManager: a Runner's plugins, called in order; the first non-None answer wins."""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Any, Literal

from ..errors import AgentqError, UsageError
from .base_plugin import BasePlugin

if TYPE_CHECKING:
    from google.genai import types

    from ..agents.base_agent import BaseAgent
    from ..contexts.callback_context import CallbackContext
    from ..contexts.invocation_context import InvocationContext
    from ..contexts.tool_context import ToolContext
    from ..events import Event
    from ..models.llm_request import LlmRequest
    from ..models.llm_response import LlmResponse
    from ..tools.base_tool import BaseTool

CallbackName = Literal[
    "on_user_message_callback", "before_run_callback", "on_event_callback", "after_run_callback",
    "on_run_error_callback", "before_agent_callback", "after_agent_callback", "on_agent_error_callback",
    "before_model_callback", "after_model_callback", "on_model_error_callback",
    "before_tool_callback", "after_tool_callback", "on_tool_error_callback",
]

log = logging.getLogger(__name__)


class PluginManager:
    """The plugins of one Runner, shared by every context of its invocations (``ctx.plugin_manager``)."""

    def __init__(self, plugins: list[BasePlugin] | None = None, close_timeout: float = 5.0):
        self.plugins: list[BasePlugin] = []
        self._close_timeout = close_timeout
        self._skip_closing = False
        self._implemented: dict[str, list[BasePlugin]] = {}
        for plugin in plugins or []:
            self.register_plugin(plugin)

    def register_plugin(self, plugin: BasePlugin) -> None:
        """Add ``plugin`` after the others; a ValueError if one with the same name is registered already."""
        if not isinstance(plugin, BasePlugin):
            raise UsageError(f"plugin {plugin!r} is a {type(plugin).__name__}, not a runtime.plugins.BasePlugin")
        if any(p.name == plugin.name for p in self.plugins):
            raise UsageError(f"Plugin with name '{plugin.name}' already registered.")
        self.plugins.append(plugin)
        self._implemented.clear()

    def get_plugin(self, plugin_name: str) -> BasePlugin | None:
        """The plugin called ``plugin_name``, or None."""
        return next((p for p in self.plugins if p.name == plugin_name), None)

    def has_callback(self, name: CallbackName) -> bool:
        """True when some plugin overrides callback ``name`` (the hot paths skip the call otherwise)."""
        return bool(self._with(name))

    def set_skip_closing_plugins(self, value: bool) -> None:
        """Make ``close()`` a no-op: the plugins belong to another runner (an AgentTool's runner shares them)."""
        self._skip_closing = value

    # --- the run ---

    async def run_on_user_message_callback(
        self, *, user_message: types.Content, invocation_context: InvocationContext
    ) -> types.Content | None:
        """The replacement user message, if a plugin gives one."""
        return await self._first("on_user_message_callback", user_message=user_message,
                                 invocation_context=invocation_context)

    async def run_before_run_callback(self, *, invocation_context: InvocationContext) -> types.Content | None:
        """The content that ends the run at once, if a plugin gives one."""
        return await self._first("before_run_callback", invocation_context=invocation_context)

    async def run_on_event_callback(self, *, invocation_context: InvocationContext, event: Event) -> Event | None:
        """The replacement event, if a plugin gives one."""
        return await self._first("on_event_callback", invocation_context=invocation_context, event=event)

    async def run_after_run_callback(self, *, invocation_context: InvocationContext) -> None:
        """Tell the plugins the run has ended."""
        await self._first("after_run_callback", invocation_context=invocation_context)

    async def run_on_run_error_callback(self, *, invocation_context: InvocationContext, error: Exception) -> None:
        """Tell every plugin about an exception escaping the run."""
        await self._notify("on_run_error_callback", invocation_context=invocation_context, error=error)

    # --- agents ---

    async def run_before_agent_callback(
        self, *, agent: BaseAgent, callback_context: CallbackContext
    ) -> types.Content | None:
        """The content that skips the agent, if a plugin gives one."""
        return await self._first("before_agent_callback", agent=agent, callback_context=callback_context)

    async def run_after_agent_callback(
        self, *, agent: BaseAgent, callback_context: CallbackContext
    ) -> types.Content | None:
        """The content of the agent's extra final event, if a plugin gives one."""
        return await self._first("after_agent_callback", agent=agent, callback_context=callback_context)

    async def run_on_agent_error_callback(
        self, *, agent: BaseAgent, callback_context: CallbackContext, error: Exception
    ) -> None:
        """Tell every plugin about an exception escaping an agent."""
        await self._notify("on_agent_error_callback", agent=agent, callback_context=callback_context, error=error)

    # --- model calls ---

    async def run_before_model_callback(
        self, *, callback_context: CallbackContext, llm_request: LlmRequest
    ) -> LlmResponse | None:
        """The response that skips the model call, if a plugin gives one."""
        return await self._first("before_model_callback", callback_context=callback_context, llm_request=llm_request)

    async def run_after_model_callback(
        self, *, callback_context: CallbackContext, llm_response: LlmResponse
    ) -> LlmResponse | None:
        """The replacement model response, if a plugin gives one."""
        return await self._first("after_model_callback", callback_context=callback_context,
                                 llm_response=llm_response)

    async def run_on_model_error_callback(
        self, *, callback_context: CallbackContext, llm_request: LlmRequest, error: Exception
    ) -> LlmResponse | None:
        """The response used instead of the model's error, if a plugin gives one."""
        return await self._first("on_model_error_callback", callback_context=callback_context,
                                 llm_request=llm_request, error=error)

    # --- tool calls ---

    async def run_before_tool_callback(
        self, *, tool: BaseTool, tool_args: dict[str, Any], tool_context: ToolContext
    ) -> dict[str, Any] | None:
        """The result that skips the tool, if a plugin gives one."""
        return await self._first("before_tool_callback", tool=tool, tool_args=tool_args, tool_context=tool_context)

    async def run_after_tool_callback(
        self, *, tool: BaseTool, tool_args: dict[str, Any], tool_context: ToolContext, result: Any
    ) -> dict[str, Any] | None:
        """The replacement tool result, if a plugin gives one."""
        return await self._first("after_tool_callback", tool=tool, tool_args=tool_args, tool_context=tool_context,
                                 result=result)

    async def run_on_tool_error_callback(
        self, *, tool: BaseTool, tool_args: dict[str, Any], tool_context: ToolContext, error: Exception
    ) -> dict[str, Any] | None:
        """The result used instead of the tool's error, if a plugin gives one."""
        return await self._first("on_tool_error_callback", tool=tool, tool_args=tool_args,
                                 tool_context=tool_context, error=error)

    # --- calling them ---

    def _with(self, name: CallbackName) -> list[BasePlugin]:
        found = self._implemented.get(name)
        if found is None:
            default = getattr(BasePlugin, name)
            found = self._implemented[name] = [p for p in self.plugins if getattr(type(p), name, None) is not default]
        return found

    async def _first(self, name: CallbackName, **kwargs: Any) -> Any:
        """Each plugin's ``name`` in order until one returns a value (then the rest are skipped).

        A plugin that raises fails the step with a RuntimeError naming the plugin, as in ADK; agentq's own
        errors (a lost lease, a retryable model error) pass through untouched so the worker still sees them.
        """
        for plugin in self._with(name):
            try:
                result = await getattr(plugin, name)(**kwargs)
            except AgentqError:
                raise
            except Exception as exc:
                raise RuntimeError(f"Error in plugin '{plugin.name}' during '{name}' callback: {exc}") from exc
            if result is not None:
                log.debug("plugin %r answered %s; later plugins and callbacks are skipped", plugin.name, name)
                return result
        return None

    async def _notify(self, name: CallbackName, **kwargs: Any) -> None:
        """Every plugin's ``name``; one that raises is logged, so none can hide the error being reported."""
        for plugin in self._with(name):
            try:
                await getattr(plugin, name)(**kwargs)
            except Exception:
                log.exception("plugin %r raised in %s", plugin.name, name)

    async def close(self) -> None:
        """Close every plugin in turn (each within ``close_timeout``); RuntimeError naming those that failed."""
        if self._skip_closing:
            return
        failed: dict[str, BaseException] = {}
        for plugin in self.plugins:
            try:
                async with asyncio.timeout(self._close_timeout):
                    await plugin.close()
            except Exception as exc:
                log.warning("plugin %r failed to close: %r", plugin.name, exc)
                failed[plugin.name] = exc
        if failed:
            summary = ", ".join(f"'{name}': {type(exc).__name__}" for name, exc in failed.items())
            raise RuntimeError(f"Failed to close plugins: {summary}")
