"""RequestInput: what a workflow node yields to ask a person for input (ADK 2's ``google.adk.events.RequestInput``).

The workflow turns it into an ``adk_request_input`` function call marked long-running, so the invocation
pauses (on a worker: parks, holding no worker) until a FunctionResponse with ``interrupt_id`` as its id answers.
"""

from __future__ import annotations

import uuid
from typing import Any

from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel

REQUEST_INPUT_FUNCTION_CALL_NAME = "adk_request_input"


class RequestInput(BaseModel):
    """A question for a person: its id (the function call id), a message, a payload and the answer's schema."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, arbitrary_types_allowed=True)

    interrupt_id: str = Field(default_factory=lambda: str(uuid.uuid4()))
    """The id the answer must carry. Reusing one id across loop iterations works: calls and answers pair up
    in order."""

    payload: Any | None = None
    """Anything the person needs to decide (the draft to review, the amount to approve)."""

    message: str | None = None
    """The question shown to the person."""

    response_schema: Any | None = None
    """The answer's shape: a JSON Schema dict, a pydantic model class or a Python type; None accepts anything."""

    def function_call_args(self) -> dict[str, Any]:
        """The ``adk_request_input`` call's arguments, as ADK writes them (camelCase fields, the schema as JSON
        Schema under ``response_schema``)."""
        args = self.model_dump(by_alias=True, exclude={"response_schema"})
        args["response_schema"] = json_schema_of(self.response_schema)
        return args


def json_schema_of(schema: Any) -> dict[str, Any] | None:
    """A JSON Schema for ``schema``: a dict as it is, a model or type through pydantic."""
    if schema is None or isinstance(schema, dict):
        return schema
    from pydantic import TypeAdapter

    return TypeAdapter(schema).json_schema()
