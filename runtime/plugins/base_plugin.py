"""BasePlugin: callbacks a Runner applies to every agent, model call and tool call of its invocations.

Agent callbacks belong to one agent; a plugin's callbacks run for the whole tree (and for agents run as an
``AgentTool``). Plugins run in the order they were given, before the agent's own callbacks: the first one to
return a value short-circuits the remaining plugins and the agent's callbacks for that step.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

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


class BasePlugin:
    """Subclass it and override the callbacks you need; each default does nothing and returns None.

    Return values (None always means "carry on"):

    - ``on_user_message_callback``: Content replaces the user's message before it is committed.
    - ``before_run_callback``: Content ends the run at once, committed as an event authored ``model``.
    - ``on_event_callback``: an Event replaces the event (its fields that were set) before it is committed.
    - ``before_agent_callback``: Content skips the agent; it is the agent's answer.
    - ``after_agent_callback``: Content is added as the agent's final event.
    - ``before_model_callback``: an LlmResponse skips the model call.
    - ``after_model_callback``: an LlmResponse replaces the model's response.
    - ``on_model_error_callback``: an LlmResponse replaces the error the model raised.
    - ``before_tool_callback``: a dict skips the tool and is its result.
    - ``after_tool_callback``: a dict replaces the tool's result.
    - ``on_tool_error_callback``: a dict replaces the error the tool raised and is its result.

    ``on_agent_error_callback`` and ``on_run_error_callback`` only observe an exception that escapes an agent
    or the run. A crashing tool or a failed model call does not raise in agentq: the run ends on an error
    event instead, which ``on_event_callback`` sees.
    """

    def __init__(self, name: str):
        self.name = name

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r})"

    # --- the run (called by the Runner) ---

    async def on_user_message_callback(
        self, *, invocation_context: InvocationContext, user_message: types.Content
    ) -> types.Content | None:
        """Called with the user's message before it is committed; Content replaces it."""

    async def before_run_callback(self, *, invocation_context: InvocationContext) -> types.Content | None:
        """Called before the agent runs; Content ends the run with that content as its only event."""

    async def on_event_callback(self, *, invocation_context: InvocationContext, event: Event) -> Event | None:
        """Called with each event (partial chunks too) before it is committed and yielded; an Event replaces it."""

    async def after_run_callback(self, *, invocation_context: InvocationContext) -> None:
        """Called when the run has ended without an exception (also when the caller stopped reading early)."""

    async def on_run_error_callback(self, *, invocation_context: InvocationContext, error: Exception) -> None:
        """Called when an exception escapes the run; it is raised again afterwards whatever this does."""

    async def close(self) -> None:
        """Release what the plugin holds; called by ``Runner.close()``."""

    # --- agents ---

    async def before_agent_callback(
        self, *, agent: BaseAgent, callback_context: CallbackContext
    ) -> types.Content | None:
        """Called before an agent runs; Content skips the agent (and its own callbacks)."""

    async def after_agent_callback(
        self, *, agent: BaseAgent, callback_context: CallbackContext
    ) -> types.Content | None:
        """Called after an agent ran; Content becomes its final event."""

    async def on_agent_error_callback(
        self, *, agent: BaseAgent, callback_context: CallbackContext, error: Exception
    ) -> None:
        """Called when an exception escapes an agent; it is raised again afterwards whatever this does."""

    # --- model calls ---

    async def before_model_callback(
        self, *, callback_context: CallbackContext, llm_request: LlmRequest
    ) -> LlmResponse | None:
        """Called before each model call (the request may be edited in place); an LlmResponse skips the call."""

    async def after_model_callback(
        self, *, callback_context: CallbackContext, llm_response: LlmResponse
    ) -> LlmResponse | None:
        """Called with each model response (streamed chunks too); an LlmResponse replaces it."""

    async def on_model_error_callback(
        self, *, callback_context: CallbackContext, llm_request: LlmRequest, error: Exception
    ) -> LlmResponse | None:
        """Called when the model call raises; an LlmResponse is used instead of the error."""

    # --- tool calls ---

    async def before_tool_callback(
        self, *, tool: BaseTool, tool_args: dict[str, Any], tool_context: ToolContext
    ) -> dict[str, Any] | None:
        """Called before a tool runs (``tool_args`` may be edited in place); a dict skips the tool and is its result."""

    async def after_tool_callback(
        self, *, tool: BaseTool, tool_args: dict[str, Any], tool_context: ToolContext, result: Any
    ) -> dict[str, Any] | None:
        """Called with the tool's result (as the tool returned it); a dict replaces it."""

    async def on_tool_error_callback(
        self, *, tool: BaseTool, tool_args: dict[str, Any], tool_context: ToolContext, error: Exception
    ) -> dict[str, Any] | None:
        """Called when the tool raises; a dict is used as its result instead of failing the run."""
