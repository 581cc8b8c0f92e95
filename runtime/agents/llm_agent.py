"""LlmAgent (alias Agent): an agent driven by a model, with tools, sub-agents and callbacks."""

from __future__ import annotations

from collections.abc import AsyncGenerator, Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal

from google.genai import types
from pydantic import BaseModel, PrivateAttr

from ..contexts.callbacks import Callbacks, as_list
from ..contexts.invocation_context import InvocationContext
from ..contexts.readonly_context import ReadonlyContext
from ..errors import InvalidAgentConfigError, UsageError
from ..events import Event
from ..flows import resume_plan
from ..flows.agent_modes import AgentMode, LlmAgentMode, is_delegated, mode_of
from ..flows.instructions import canonical
from ..flows.llm_flow import run_flow
from ..models.base_llm import BaseLlm
from ..models.registry import resolve
from ..tools.base_tool import BaseTool
from ..tools.delegation_tools import SingleTurnAgentTool, TaskAgentTool
from ..tools.finish_task_tool import FinishTaskTool, is_finish_task_terminal
from ..tools.function_tool import FunctionTool
from ..tools.transfer_to_agent_tool import transfer_to_agent
from .base_agent import BaseAgent

InstructionProvider = Callable[..., Any]
"""A callable taking a ReadonlyContext and returning the instruction (str, or an awaitable of str)."""


class LlmAgent(BaseAgent):
    """An agent that asks a model what to do, runs the tools it calls, and may hand over to other agents.

    ``model`` is a BaseLlm or a model name (resolved through the registry; inherited from the parent when
    empty). ``output_schema`` asks the model for JSON of that shape (stored parsed under ``output_key``);
    ``input_schema`` shapes the arguments when the agent is used as an AgentTool. ``instruction`` is templated from state (``{key}``, ``{key?}``, ``{app:k}``, ``{artifact.f}``) unless
    it is a callable. ``output_key`` stores the final text in state. ``transfer_to_agent`` is offered when the
    agent has sub-agents or may transfer to its parent or peers.
    """

    runs_as_node: ClassVar[bool] = True
    model: str | BaseLlm = ""
    instruction: str | InstructionProvider = ""
    global_instruction: str | InstructionProvider = ""
    tools: list[Any] = []
    generate_content_config: types.GenerateContentConfig | None = None
    disallow_transfer_to_parent: bool = False
    disallow_transfer_to_peers: bool = False
    include_contents: Literal["default", "none"] = "default"
    mode: LlmAgentMode | None = None
    """How the parent reaches this agent: ``chat`` (transfer_to_agent; what None means for a sub-agent),
    ``task`` (called like a tool, talks with the user, ends with finish_task) or ``single_turn`` (called like
    a tool, answers from its input alone). See ``runtime.flows.delegation``."""
    output_key: str | None = None
    input_schema: type[BaseModel] | None = None
    output_schema: type[BaseModel] | None = None
    before_model_callback: Callbacks = None
    after_model_callback: Callbacks = None
    before_tool_callback: Callbacks = None
    after_tool_callback: Callbacks = None

    _cache: _Cache = PrivateAttr(default_factory=lambda: _Cache())

    def __init__(self, **data: Any):
        # Checked before BaseAgent links the sub-agents (a refused agent must not become their parent), and
        # outside pydantic so the caller gets our error rather than a ValidationError wrapping it.
        config = data.get("generate_content_config")
        if config is not None:
            _check_generate_content_config(types.GenerateContentConfig.model_validate(config))
        super().__init__(**data)
        self._add_delegation_tools()

    def _add_delegation_tools(self) -> None:
        """As ADK does on construction: a task agent gets finish_task, and each task or single_turn sub-agent
        becomes a tool of this agent (after the user's tools, in a new list: the caller's stays as it was)."""
        added: list[BaseTool] = []
        if self.mode == AgentMode.TASK:
            added.append(FinishTaskTool(self))
        for sub_agent in self.sub_agents:
            if isinstance(sub_agent, LlmAgent) and sub_agent.mode is None:
                sub_agent.mode = AgentMode.CHAT.value  # a sub-agent without a mode is a chat agent
            sub_mode = mode_of(sub_agent)
            if sub_mode == AgentMode.TASK:
                added.append(TaskAgentTool(sub_agent))
            elif sub_mode == AgentMode.SINGLE_TURN:
                added.append(SingleTurnAgentTool(sub_agent))
        if added:
            self.tools = [*self.tools, *added]

    def _c(self) -> _Cache:
        # Straight to pydantic's private dict: attribute access on private attrs goes through a slow __getattr__.
        return self.__pydantic_private__["_cache"]

    @property
    def canonical_model(self) -> BaseLlm:
        """The model instance this agent calls."""
        if isinstance(self.model, BaseLlm):
            return self.model
        cache = self._c()
        if cache.model is None:
            if self.model:
                cache.model = resolve(self.model)
            else:
                parent = self.parent_agent
                while parent is not None and not isinstance(parent, LlmAgent):
                    parent = parent.parent_agent
                if parent is None:
                    raise UsageError(f"no model found for agent {self.name!r}: set model= on it or an ancestor")
                return parent.canonical_model
        return cache.model

    def base_config(self) -> types.GenerateContentConfig:
        """``generate_content_config`` (or an empty one), copied per request by the flow."""
        if self.generate_content_config is not None:
            return self.generate_content_config
        cache = self._c()
        if cache.base_config is None:
            cache.base_config = types.GenerateContentConfig()
        return cache.base_config

    def transfer_targets(self) -> list[BaseAgent]:
        """The agents this one may transfer to: sub-agents, then parent and peers when allowed (task and
        single_turn agents are called like tools, never transferred to)."""
        targets = [sub_agent for sub_agent in self.sub_agents if not is_delegated(sub_agent)]
        parent = self.parent_agent
        if isinstance(parent, LlmAgent):
            if not self.disallow_transfer_to_parent:
                targets.append(parent)
            if not self.disallow_transfer_to_peers:
                targets.extend(peer for peer in parent.sub_agents if peer is not self and not is_delegated(peer))
        return targets

    async def canonical_instruction(self, ctx: ReadonlyContext) -> tuple[str, bool]:
        """``(instruction, bypass_state_injection)``: the string instruction as written (templated later), or
        what the InstructionProvider returns for ``ctx`` (used verbatim, so the flag is True)."""
        return await canonical(self.instruction, ctx)

    async def canonical_global_instruction(self, ctx: ReadonlyContext) -> tuple[str, bool]:
        """``(global_instruction, bypass_state_injection)``, as ``canonical_instruction`` does for ``instruction``."""
        return await canonical(self.global_instruction, ctx)

    async def canonical_tools(self, ctx: Any = None) -> list[Any]:
        """The tools as BaseTool instances (ADK's name for ``tools_dict().values()``)."""
        return list(self.tools_dict().values())

    @property
    def canonical_before_model_callbacks(self) -> list[Callable[..., Any]]:
        """``before_model_callback`` as a list."""
        return as_list(self.before_model_callback)

    @property
    def canonical_after_model_callbacks(self) -> list[Callable[..., Any]]:
        """``after_model_callback`` as a list."""
        return as_list(self.after_model_callback)

    @property
    def canonical_before_tool_callbacks(self) -> list[Callable[..., Any]]:
        """``before_tool_callback`` as a list."""
        return as_list(self.before_tool_callback)

    @property
    def canonical_after_tool_callbacks(self) -> list[Callable[..., Any]]:
        """``after_tool_callback`` as a list."""
        return as_list(self.after_tool_callback)

    def tools_dict(self) -> dict[str, Any]:
        """Tools by name (functions wrapped as FunctionTool, transfer_to_agent added when needed)."""
        return self._refresh_tools().tools

    def tool_declarations(self) -> tuple[types.Tool | None, dict[str, Any]]:
        """The declarations to send (built once per tool list) and the tools by name."""
        cache = self._refresh_tools()
        return cache.declarations, cache.tools

    def _refresh_tools(self) -> _Cache:
        cache = self._c()
        targets = self.transfer_targets()
        key = (tuple(id(tool) for tool in self.tools), tuple(id(target) for target in targets))
        if key == cache.tools_key:
            return cache
        tools = [tool if isinstance(tool, BaseTool) else FunctionTool(tool) for tool in self.tools]
        if targets and not any(tool.name == "transfer_to_agent" for tool in tools):
            # first, as ADK 2.13 declares it (its transfer request processor runs before the agent's tools are added)
            tools.insert(0, FunctionTool(transfer_to_agent))
        cache.tools = {tool.name: tool for tool in tools}
        declarations = [d for d in (tool._get_declaration() for tool in tools) if d is not None]
        if targets:
            names = [target.name for target in targets]
            declarations = [_only_agents(d, names) if d.name == "transfer_to_agent" else d for d in declarations]
        cache.declarations = types.Tool(function_declarations=declarations) if declarations else None
        cache.tools_key = key
        return cache

    async def _run_async_impl(self, ctx: InvocationContext) -> AsyncGenerator[Event, None]:
        last = None
        ended = False  # a transfer ends the agent before its target runs (ADK's resumable shape)
        output = ""  # the agent's text so far in this run, for output_key
        async for event in run_flow(self, ctx):
            if self.output_key and event.author == self.name:
                output = self._save_output(event, output)
            ended = ended or (event.author == self.name and bool(event.actions.end_of_agent))
            last = event
            yield event
        # An error answer stays the invocation's last word (callers read the outcome from it).
        failed = last is not None and last.error_code is not None and last.author == self.name
        # as google-adk 2.13, whose task wrapper returns on the finish_task answer: a finished task commits no
        # end_of_agent (a task that asked the user something does)
        finished_task = last is not None and self.mode == AgentMode.TASK and is_finish_task_terminal(last)
        if (ctx.run.llm_end_events and not ctx.end_invocation and not ctx.is_paused() and not failed
                and not finished_task and not ended and not resume_plan.has_ended(self, ctx)):
            yield self._checkpoint(ctx, end_of_agent=True)

    async def _agent_callback_event(self, ctx: InvocationContext, callbacks, *, end: bool) -> Event | None:
        event = await super()._agent_callback_event(ctx, callbacks, end=end)
        if end and event is not None and self.output_key:  # the before-agent answer is the agent's output
            self._save_output(event, "")
        return event

    def _save_output(self, event: Event, so_far: str) -> str:
        """Store the agent's output under ``output_key`` in ``event``'s delta; returns the text so far.

        A final answer's text (parsed JSON with ``output_schema``) is stored; without a schema, every
        committed text of the run counts, so text said next to a tool call is kept: the value is the
        concatenation of the run's texts up to this event."""
        if event.partial or not event.content or not event.content.parts or self.mode == AgentMode.TASK:
            return so_far  # a task's output is its finish_task arguments (stored by that tool), not its chat
        text = "".join(part.text for part in event.content.parts if part.text and not part.thought)
        has_text = any(part.text is not None and not part.thought for part in event.content.parts)
        if self.output_schema is not None:
            if event.is_final_response() and text.strip():
                event.actions.state_delta[self.output_key] = self.output_schema.model_validate_json(
                    text).model_dump(exclude_none=True)
            return so_far
        if has_text and event.is_final_response():
            event.actions.state_delta[self.output_key] = text
        if text:
            so_far += text
            event.actions.state_delta[self.output_key] = so_far
        return so_far


def _check_generate_content_config(config: types.GenerateContentConfig) -> None:
    """Refuse settings that have their own LlmAgent argument (ADK's wording, so its users recognise it)."""
    if config.tools:
        raise InvalidAgentConfigError(
            "All tools must be set via LlmAgent.tools, not via generate_content_config.tools. "
            "Move your tools to the LlmAgent(tools=[...]) parameter."
        )
    if config.system_instruction:
        raise InvalidAgentConfigError(
            "System instruction must be set via LlmAgent.instruction, not via "
            "generate_content_config.system_instruction. Move your instruction to LlmAgent(instruction=\"...\")."
        )
    if config.response_schema:
        raise InvalidAgentConfigError(
            "Response schema must be set via LlmAgent.output_schema, not via "
            "generate_content_config.response_schema. Move your schema to LlmAgent(output_schema=...)."
        )
    if config.http_options and config.http_options.base_url:
        raise InvalidAgentConfigError(
            "Base URL is a transport setting and must be set on the model or its client, not via "
            "LlmAgent.generate_content_config.http_options.base_url."
        )


@dataclass
class _Cache:
    """What an LlmAgent computes once: its model instance, tools by name, declarations, base config."""

    model: BaseLlm | None = None
    base_config: types.GenerateContentConfig | None = None
    tools_key: tuple | None = None
    tools: dict[str, Any] = field(default_factory=dict)
    declarations: types.Tool | None = None


Agent = LlmAgent


def _only_agents(declaration: types.FunctionDeclaration, names: list[str]) -> types.FunctionDeclaration:
    """transfer_to_agent's declaration with ``agent_name`` limited to ``names`` (an enum, as ADK 2.13 declares
    it), so the model is told exactly which agents it may hand over to."""
    declaration = declaration.model_copy(deep=True)
    if declaration.parameters_json_schema is not None:
        schema = dict(declaration.parameters_json_schema)
        properties = dict(schema.get("properties") or {})
        if "agent_name" in properties:
            properties["agent_name"] = {**properties["agent_name"], "enum": names}
            schema["properties"] = properties
            declaration.parameters_json_schema = schema
    elif declaration.parameters is not None and declaration.parameters.properties:
        field = declaration.parameters.properties.get("agent_name")
        if field is not None:
            field.enum = names
    return declaration
