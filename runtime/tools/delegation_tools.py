"""The tools through which a coordinator delegates to its task and single_turn sub-agents.

They only declare the call to the model: the flow recognises a call to one (``delegates_to``) and runs the
sub-agent itself, in the coordinator's invocation and session, on a branch of its own (see
``flows.delegation``).
"""

from __future__ import annotations

from typing import Any

from google.genai import types
from pydantic import BaseModel, Field

from ._schema import schema_for
from .base_tool import BaseTool


class _DefaultTaskInput(BaseModel):
    # No docstring on purpose: pydantic would send it to the model as the schema's description.
    request: str = Field(description="What the sub-agent should do, with every detail and bit of context it needs.")


_TASK_SUFFIX = ("\nNote: calling this tool hands the work to another agent; call it on its own, never together "
                "with other tools in one turn.")


class _DelegationTool(BaseTool):
    """A call of this tool runs ``agent`` (its sub-agent) instead of a function."""

    def __init__(self, agent: Any):
        super().__init__(name=agent.name, description=agent.description)
        self.agent = agent
        self.delegates_to = agent

    async def run_async(self, *, args: dict[str, Any], tool_context: Any) -> Any:
        return None  # never called: the flow runs the sub-agent in its place


class TaskAgentTool(_DelegationTool):
    """Delegates to a task-mode agent: its ``input_schema`` (or one ``request`` string) are the arguments."""

    def _get_declaration(self) -> types.FunctionDeclaration:
        schema = self.agent.input_schema or _DefaultTaskInput
        return types.FunctionDeclaration(
            name=self.name,
            description=f"{self.agent.description or ''}{_TASK_SUFFIX}".strip(),
            parameters_json_schema=schema.model_json_schema(),
        )


class SingleTurnAgentTool(_DelegationTool):
    """Delegates to a single_turn agent, declared as an AgentTool is (``input_schema``, else ``request``)."""

    def _get_declaration(self) -> types.FunctionDeclaration:
        schema = self.agent.input_schema
        if schema is not None:
            parameters = schema_for(schema)
        else:
            parameters = types.Schema(type=types.Type.OBJECT, properties={"request": types.Schema(
                type=types.Type.STRING)}, required=["request"])
        return types.FunctionDeclaration(name=self.name, description=self.agent.description or None,
                                         parameters=parameters)
