"""Event: one step of an invocation, as the Runner commits and forwards it."""

from __future__ import annotations

import time
from typing import Any

from google.genai import types
from pydantic import ConfigDict, Field
from pydantic.alias_generators import to_camel

from ..ids import new_event_id
from ..models.llm_response import LlmResponse
from .event_actions import EventActions


class Event(LlmResponse):
    """An event carries a model response's fields (it is an LlmResponse) plus who wrote it, when, and what it changes.

    JSON on the wire is camelCase (``invocationId``, ``longRunningToolIds``); input also accepts snake_case.
    """

    model_config = ConfigDict(
        alias_generator=to_camel, populate_by_name=True, extra="forbid", arbitrary_types_allowed=True
    )

    # --- the event's own fields ---
    invocation_id: str = ""
    author: str
    actions: EventActions = Field(default_factory=EventActions)
    long_running_tool_ids: set[str] | None = None
    branch: str | None = None
    id: str = Field(default_factory=new_event_id)
    timestamp: float = Field(default_factory=time.time)

    def get_function_calls(self) -> list[types.FunctionCall]:
        """The function calls in this event's content, in order."""
        if not self.content or not self.content.parts:
            return []
        return [part.function_call for part in self.content.parts if part.function_call]

    def get_function_responses(self) -> list[types.FunctionResponse]:
        """The function responses in this event's content, in order."""
        if not self.content or not self.content.parts:
            return []
        return [part.function_response for part in self.content.parts if part.function_response]

    def has_trailing_code_execution_result(self) -> bool:
        """True when the last part is a code execution result (the model will continue after it)."""
        if not self.content or not self.content.parts:
            return False
        return self.content.parts[-1].code_execution_result is not None

    def is_final_response(self) -> bool:
        """True when this event is the agent's answer for the turn, the one a UI should show."""
        if self.actions.skip_summarization or self.long_running_tool_ids:
            return True
        if self.error_code and not self.partial and not self.get_function_calls():
            return True
        return (
            not self.get_function_calls()
            and not self.get_function_responses()
            and not self.partial
            and not self.has_trailing_code_execution_result()
        )

    def text(self) -> str:
        """The concatenated text parts (thoughts excluded); '' when there are none."""
        if not self.content or not self.content.parts:
            return ""
        return "".join(part.text for part in self.content.parts if part.text and not part.thought)

    def to_json_dict(self) -> dict[str, Any]:
        """The wire form: camelCase keys, None fields left out."""
        return self.model_dump(mode="json", by_alias=True, exclude_none=True)

    def to_json(self) -> str:
        """The wire form as a JSON string."""
        return self.model_dump_json(by_alias=True, exclude_none=True)
