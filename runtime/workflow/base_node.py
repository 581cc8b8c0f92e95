"""BaseNode: a step of a workflow graph, and START, the graph's entry."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from ..events import Event, RequestInput
from .errors import WorkflowConfigurationError
from .retry_config import RetryConfig

if TYPE_CHECKING:
    from .context import Context


class BaseNode(BaseModel):
    """A node: a name unique in its graph, and ``_run_impl``, an async generator of outputs.

    ``_run_impl`` may yield an Event (``Event(output=..., route=..., state=...)``), a RequestInput (the node
    then waits for a person), None (ignored) or any other value (the node's output). ``rerun_on_resume``: after
    a person answered, run the node again with the answers in ``ctx.resume_inputs`` (True) or take the answer
    as the node's output (False). ``retry_config`` and ``timeout`` (seconds) apply per node run;
    ``wait_for_output``: a run that yields no output leaves the node waiting for another trigger.
    """

    # An ADK 2.13 node setting agentq lacks (auth_config, require_confirmation, ...) is refused, never ignored.
    model_config = ConfigDict(arbitrary_types_allowed=True, extra="forbid")

    name: str = Field(...)
    description: str = ""
    rerun_on_resume: bool = False
    wait_for_output: bool = False
    retry_config: RetryConfig | None = None
    timeout: float | None = None
    input_schema: Any | None = None
    output_schema: Any | None = None
    state_schema: Any | None = None

    @field_validator("name")
    @classmethod
    def _check_name(cls, name: str) -> str:
        if not name.isidentifier():
            raise WorkflowConfigurationError(f"Node name '{name}' must be a valid Python identifier.")
        return name

    async def run(self, *, ctx: Context, node_input: Any) -> AsyncGenerator[Event, None]:
        """Run the node once: its yields become Events (a RequestInput becomes the ``adk_request_input`` call);
        the input is checked against ``input_schema`` and every output against ``output_schema``."""
        node_input = validate_node_data(self.input_schema, node_input)
        async for item in self._run_impl(ctx=ctx, node_input=node_input):
            if item is None:
                continue
            if isinstance(item, Event):
                if item.output is not None:
                    item.output = validate_node_data(self.output_schema, item.output)
                yield item
            elif isinstance(item, RequestInput):
                yield request_input_event(item)
            else:
                yield Event(output=_plain(validate_node_data(self.output_schema, item)))

    async def _run_impl(self, *, ctx: Context, node_input: Any) -> AsyncGenerator[Any, None]:
        raise NotImplementedError(f"_run_impl for {type(self).__name__} is not implemented.")
        yield  # pragma: no cover - makes this an async generator

    @property
    def waits_for_all_predecessors(self) -> bool:
        """True for a join: it runs once every predecessor has delivered."""
        return False


def validate_node_data(schema: Any, data: Any) -> Any:
    """``data`` checked and coerced by ``schema`` (a type or pydantic model, through a TypeAdapter; a model comes
    back as a dict). A JSON Schema dict is documentation only, as in ADK: not enforced."""
    if data is None or schema is None or isinstance(schema, dict):
        return data
    from pydantic import TypeAdapter

    return _plain(TypeAdapter(schema).validate_python(data))


def _plain(value: Any) -> Any:
    """A pydantic model output becomes a dict (None fields dropped), as ADK stores it."""
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json", exclude_none=True)
    if isinstance(value, list):
        return [_plain(item) for item in value]
    if isinstance(value, dict):
        return {key: _plain(item) for key, item in value.items()}
    return value


def request_input_event(request: RequestInput) -> Event:
    """The long-running ``adk_request_input`` call that asks a person and pauses the invocation."""
    from google.genai import types

    from ..events.request_input import REQUEST_INPUT_FUNCTION_CALL_NAME

    call = types.FunctionCall(name=REQUEST_INPUT_FUNCTION_CALL_NAME, args=request.function_call_args(),
                              id=request.interrupt_id)
    return Event(content=types.Content(role="model", parts=[types.Part(function_call=call)]),
                 long_running_tool_ids={request.interrupt_id})


START = BaseNode(name="__START__")
"""The graph's entry: never run; its successors get the workflow's input."""
