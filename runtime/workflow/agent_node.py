"""AgentNode: an agent (an LlmAgent, usually) as a workflow node.

As ADK 2 runs an agent node by default (single turn), the model is shown only the node's input, as the user's
message, and the agent's own events of this node run (its tool calls and their answers); its final text is the
node's output (``node_info.message_as_output``), or the parsed JSON when it has an ``output_schema``. Its events
are authored by the agent. It runs again after a pause (a tool confirmation, a long-running tool), continuing
from its committed events.
"""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator
from typing import Any

from google.genai import types
from pydantic import BaseModel, ConfigDict, Field

from ..agents.base_agent import BaseAgent
from ..events import Event, NodeInfo
from .base_node import BaseNode


class AgentNode(BaseNode):
    """Runs ``agent`` with the previous node's output as its input."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    agent: BaseAgent = Field(...)

    def __init__(self, *, agent: BaseAgent, name: str | None = None, **data: Any):
        super().__init__(agent=agent, name=name or agent.name, description=agent.description, **data)

    async def _run_impl(self, *, ctx: Any, node_input: Any) -> AsyncGenerator[Any, None]:
        invocation = ctx.invocation_context.model_copy(update={
            "node_path": ctx.node_path, "node_input_content": as_user_content(node_input)})
        schema = getattr(self.agent, "output_schema", None)
        async for event in self.agent.run_async(invocation):
            if _is_answer(event):
                if schema is not None:
                    event.output = _parsed(event.text(), schema)
                else:
                    event.node_info = NodeInfo(path=ctx.node_path, message_as_output=True)
            yield event


def _is_answer(event: Event) -> bool:
    """A final model message: the node's output."""
    content = event.content
    return (not event.partial and content is not None and content.role == "model" and bool(content.parts)
            and not event.get_function_calls() and bool(event.text()))


def _parsed(text: str, schema: type[BaseModel]) -> Any:
    return schema.model_validate_json(text).model_dump(mode="json", exclude_none=True) if text.strip() else None


def as_user_content(value: Any) -> types.Content | None:
    """A node's input as the user's message to an agent: Content as it is, text as text, anything else as JSON."""
    if value is None:
        return None
    if isinstance(value, types.Content):
        return types.Content(role="user", parts=value.parts)
    if isinstance(value, BaseModel):
        value = value.model_dump(mode="json")
    text = value if isinstance(value, str) else json.dumps(value, default=str)
    return types.Content(role="user", parts=[types.Part(text=text)])
