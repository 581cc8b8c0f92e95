"""LoggingPlugin: one log line per step of every invocation (messages, agents, model and tool calls, events)."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

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

log = logging.getLogger(__name__)

_MAX = 200  # characters of content shown per line: enough to recognise it, short enough to scan


class LoggingPlugin(BasePlugin):
    """Logs each step at INFO on the ``runtime.plugins.logging_plugin`` logger, with the invocation id.

    ADK's LoggingPlugin prints to stdout; a worker's output is its log, so this one uses ``logging``.
    It never changes anything: every callback returns None.
    """

    def __init__(self, name: str = "logging_plugin"):
        super().__init__(name)

    def _log(self, invocation_id: str, step: str, detail: str = "") -> None:
        log.info("[%s] invocation %s: %s%s", self.name, invocation_id, step, f" {detail}" if detail else "")

    async def on_user_message_callback(self, *, invocation_context: InvocationContext,
                                       user_message: types.Content) -> None:
        self._log(invocation_context.invocation_id, "user message", _text(user_message))

    async def before_run_callback(self, *, invocation_context: InvocationContext) -> None:
        self._log(invocation_context.invocation_id, "run starting", f"agent={invocation_context.agent.name}")

    async def on_event_callback(self, *, invocation_context: InvocationContext, event: Event) -> None:
        if event.partial:
            return  # streamed chunks would flood the log; the final event carries the whole text
        what = event.error_message if event.error_code else _text(event.content)
        self._log(invocation_context.invocation_id, f"event by {event.author}",
                  f"{'error ' + event.error_code + ': ' if event.error_code else ''}{what}")

    async def after_run_callback(self, *, invocation_context: InvocationContext) -> None:
        self._log(invocation_context.invocation_id, "run completed")

    async def before_agent_callback(self, *, agent: BaseAgent, callback_context: CallbackContext) -> None:
        self._log(callback_context.invocation_id, f"agent {agent.name} starting")

    async def after_agent_callback(self, *, agent: BaseAgent, callback_context: CallbackContext) -> None:
        self._log(callback_context.invocation_id, f"agent {agent.name} completed")

    async def before_model_callback(self, *, callback_context: CallbackContext, llm_request: LlmRequest) -> None:
        self._log(callback_context.invocation_id, f"model request by {callback_context.agent_name}",
                  f"model={llm_request.model} tools={sorted(llm_request.tools_dict)}")

    async def after_model_callback(self, *, callback_context: CallbackContext, llm_response: LlmResponse) -> None:
        if llm_response.partial:
            return
        what = llm_response.error_message if llm_response.error_code else _text(llm_response.content)
        self._log(callback_context.invocation_id, f"model response to {callback_context.agent_name}", what)

    async def on_model_error_callback(self, *, callback_context: CallbackContext, llm_request: LlmRequest,
                                      error: Exception) -> None:
        self._log(callback_context.invocation_id, "model error", repr(error))

    async def before_tool_callback(self, *, tool: BaseTool, tool_args: dict[str, Any],
                                   tool_context: ToolContext) -> None:
        self._log(tool_context.invocation_id, f"tool {tool.name} called", _short(tool_args))

    async def after_tool_callback(self, *, tool: BaseTool, tool_args: dict[str, Any], tool_context: ToolContext,
                                  result: Any) -> None:
        self._log(tool_context.invocation_id, f"tool {tool.name} returned", _short(result))

    async def on_tool_error_callback(self, *, tool: BaseTool, tool_args: dict[str, Any],
                                     tool_context: ToolContext, error: Exception) -> None:
        self._log(tool_context.invocation_id, f"tool {tool.name} raised", repr(error))


def _text(content: types.Content | None) -> str:
    if content is None or not content.parts:
        return ""
    said = []
    for part in content.parts:
        if part.text is not None:
            said.append(part.text)
        elif part.function_call is not None:
            said.append(f"call {part.function_call.name}({_short(part.function_call.args)})")
        elif part.function_response is not None:
            said.append(f"response {part.function_response.name}: {_short(part.function_response.response)}")
    return _short(" | ".join(said))


def _short(value: Any) -> str:
    text = value if isinstance(value, str) else repr(value)
    return text if len(text) <= _MAX else text[: _MAX - 3] + "..."
