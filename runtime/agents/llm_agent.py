"""LlmAgent (alias Agent): an agent driven by a model, with tools, sub-agents and callbacks."""

from __future__ import annotations

from collections.abc import AsyncGenerator, Callable
from typing import Any, Literal

from google.genai import types
from pydantic import PrivateAttr

from ..errors import UsageError
from ..events import Event
from ..models.base_llm import BaseLlm
from .base_agent import BaseAgent
from .callbacks import Callbacks
from .invocation_context import InvocationContext

InstructionProvider = Callable[..., Any]
"""A callable taking a ReadonlyContext and returning the instruction (str, or an awaitable of str)."""


class LlmAgent(BaseAgent):
    """An agent that asks a model what to do, runs the tools it calls, and may hand over to other agents.

    ``model`` is a BaseLlm or a model name (resolved through the registry; inherited from the parent when
    empty). ``instruction`` is templated from state (``{key}``, ``{key?}``, ``{app:k}``, ``{artifact.f}``) unless
    it is a callable. ``output_key`` stores the final text in state. ``transfer_to_agent`` is offered when the
    agent has sub-agents or may transfer to its parent or peers.
    """

    model: str | BaseLlm = ""
    instruction: str | InstructionProvider = ""
    global_instruction: str | InstructionProvider = ""
    tools: list[Any] = []
    generate_content_config: types.GenerateContentConfig | None = None
    disallow_transfer_to_parent: bool = False
    disallow_transfer_to_peers: bool = False
    include_contents: Literal["default", "none"] = "default"
    output_key: str | None = None
    before_model_callback: Callbacks = None
    after_model_callback: Callbacks = None
    before_tool_callback: Callbacks = None
    after_tool_callback: Callbacks = None

    _model: BaseLlm | None = PrivateAttr(default=None)
    _tools_key: tuple | None = PrivateAttr(default=None)
    _tools: dict[str, Any] = PrivateAttr(default_factory=dict)
    _declarations: types.Tool | None = PrivateAttr(default=None)
    _base_config: types.GenerateContentConfig | None = PrivateAttr(default=None)

    @property
    def canonical_model(self) -> BaseLlm:
        """The model instance this agent calls."""
        if self._model is None:
            if isinstance(self.model, BaseLlm):
                return self.model
            if self.model:
                from ..models.registry import resolve

                self._model = resolve(self.model)
            else:
                parent = self.parent_agent
                while parent is not None and not isinstance(parent, LlmAgent):
                    parent = parent.parent_agent
                if parent is None:
                    raise UsageError(f"no model found for agent {self.name!r}: set model= on it or an ancestor")
                return parent.canonical_model
        return self._model

    def base_config(self) -> types.GenerateContentConfig:
        """``generate_content_config`` (or an empty one), copied per request by the flow."""
        if self.generate_content_config is not None:
            return self.generate_content_config
        if self._base_config is None:
            self._base_config = types.GenerateContentConfig()
        return self._base_config

    def transfer_targets(self) -> list[BaseAgent]:
        """The agents this one may transfer to: sub-agents, then parent and peers when allowed."""
        targets = list(self.sub_agents)
        parent = self.parent_agent
        if isinstance(parent, LlmAgent):
            if not self.disallow_transfer_to_parent:
                targets.append(parent)
            if not self.disallow_transfer_to_peers:
                targets.extend(peer for peer in parent.sub_agents if peer is not self)
        return targets

    def tools_dict(self) -> dict[str, Any]:
        """Tools by name (functions wrapped as FunctionTool, transfer_to_agent added when needed)."""
        self._refresh_tools()
        return self._tools

    def tool_declarations(self) -> tuple[types.Tool | None, dict[str, Any]]:
        """The declarations to send (built once per tool list) and the tools by name."""
        self._refresh_tools()
        return self._declarations, self._tools

    def _refresh_tools(self) -> None:
        targets = self.transfer_targets()
        key = (tuple(id(tool) for tool in self.tools), tuple(id(target) for target in targets))
        if key == self._tools_key:
            return
        from ..tools.base_tool import BaseTool
        from ..tools.function_tool import FunctionTool
        from ..tools.transfer_to_agent_tool import transfer_to_agent

        tools = [tool if isinstance(tool, BaseTool) else FunctionTool(tool) for tool in self.tools]
        if targets and not any(tool.name == "transfer_to_agent" for tool in tools):
            tools.append(FunctionTool(transfer_to_agent))
        self._tools = {tool.name: tool for tool in tools}
        declarations = [d for d in (tool._get_declaration() for tool in tools) if d is not None]
        self._declarations = types.Tool(function_declarations=declarations) if declarations else None
        self._tools_key = key

    async def _run_async_impl(self, ctx: InvocationContext) -> AsyncGenerator[Event, None]:
        from ..flows.llm_flow import run_flow

        async for event in run_flow(self, ctx):
            self._save_output(event)
            yield event

    def _save_output(self, event: Event) -> None:
        if not self.output_key or event.author != self.name or not event.is_final_response():
            return
        if event.content and event.content.parts:
            text = "".join(part.text for part in event.content.parts if part.text and not part.thought)
            event.actions.state_delta[self.output_key] = text


Agent = LlmAgent
