"""finish_task: the tool a task-mode agent calls to end its task and hand its result to the delegator.

Its parameters are the agent's ``output_schema`` (a JSON object schema), or one string ``result`` when the
agent has none; a schema that is not an object (``str``, ``list[int]``) is wrapped as ``{"result": ...}``.
The arguments are validated: a mismatch is answered to the model as an error and the task goes on, so the
model can retry. The task's output is the call's arguments (unwrapped), read by the flow from the call.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from google.genai import types
from pydantic import BaseModel, ConfigDict, TypeAdapter, ValidationError

from .base_tool import BaseTool

if TYPE_CHECKING:
    from ..contexts.tool_context import ToolContext
    from ..events import Event

FINISH_TASK_TOOL_NAME = "finish_task"
FINISH_TASK_SUCCESS_RESULT = "Task completed."
"""What a successful call answers; a response carrying it closes the task."""
FINISH_TASK_ERROR_RESULT = "Task failed."
"""Also closes the task (ADK reserves it for a task that gave up)."""
WRAPPER_KEY = "result"

# What the model is told about finishing, appended to the task agent's system instruction (ADK's words: the
# model's view is behaviour that users tune their prompts against).
FINISH_TASK_INSTRUCTION = """\
Only call `finish_task` once the task you were given is entirely done: use your
tools for every part of it first, and ask the user whenever something about the
task is unclear. When it is done, call `finish_task` alone, without any text."""


class _DefaultTaskOutput(BaseModel):
    # No docstring on purpose: pydantic would send it to the model as the schema's description.
    model_config = ConfigDict(extra="forbid")

    result: str


class FinishTaskTool(BaseTool):
    """Ends the task of ``task_agent`` (a task-mode LlmAgent) once its arguments match the output schema."""

    def __init__(self, task_agent: Any):
        schema = task_agent.output_schema
        description = "Report that the task handed to this agent is done; call it once the task is finished."
        if schema is not None:
            description += " Put the task's result in the parameters."
        super().__init__(name=FINISH_TASK_TOOL_NAME, description=description)
        self.output_key: str | None = task_agent.output_key
        self._adapter: TypeAdapter[Any] = TypeAdapter(schema if schema is not None else _DefaultTaskOutput)
        self.wrapper_key: str | None = None if self._adapter.json_schema().get("type") == "object" else WRAPPER_KEY

    def _get_declaration(self) -> types.FunctionDeclaration:
        schema = self._adapter.json_schema()
        if self.wrapper_key:
            # $defs stay at the root so the $ref pointers inside the wrapped schema still resolve
            definitions = schema.pop("$defs", None)
            schema = {"type": "object", "properties": {self.wrapper_key: schema}, "required": [self.wrapper_key]}
            if definitions:
                schema["$defs"] = definitions
        return types.FunctionDeclaration(name=self.name, description=self.description, parameters_json_schema=schema)

    def output_of(self, args: dict[str, Any] | None) -> Any:
        """The task's output carried by a finish_task call's arguments."""
        args = dict(args or {})
        if self.wrapper_key and self.wrapper_key in args:
            return args[self.wrapper_key]
        return args

    async def run_async(self, *, args: dict[str, Any], tool_context: ToolContext) -> Any:
        try:
            self._adapter.validate_python(args.get(self.wrapper_key) if self.wrapper_key else args)
        except ValidationError as exc:
            return {"error": (
                f"Invoking `{self.name}()` failed due to validation errors:\n{exc}\nYou could retry calling this "
                "tool, but it is IMPORTANT for you to provide all the mandatory parameters with correct types.")}
        if self.output_key:  # as ADK: the task's output, not its chat text, is what output_key keeps
            tool_context.state[self.output_key] = self.output_of(args)
        return FINISH_TASK_SUCCESS_RESULT


def closes_task(response: types.FunctionResponse) -> bool:
    """True for a finish_task answer that ends the task (a validation error does not)."""
    return (response.name == FINISH_TASK_TOOL_NAME
            and (response.response or {}).get("result") in (FINISH_TASK_SUCCESS_RESULT, FINISH_TASK_ERROR_RESULT))


def is_finish_task_terminal(event: Event) -> bool:
    """True when ``event`` answers a finish_task call for good."""
    return any(closes_task(response) for response in event.get_function_responses())
