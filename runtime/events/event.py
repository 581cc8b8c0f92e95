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
from .node_info import NodeInfo


class Event(LlmResponse):
    """An event carries a model response's fields (it is an LlmResponse) plus who wrote it, when, and what it changes.

    JSON on the wire is camelCase (``invocationId``, ``longRunningToolIds``); input also accepts snake_case.
    As ADK 2, a workflow node may write ``Event(output=..., state={...}, route=..., message=...)``: ``state``
    goes to ``actions.state_delta``, ``route`` to ``actions.route``, ``message`` (text or Content) to
    ``content`` and ``node_path`` to ``node_info.path``.
    """

    model_config = ConfigDict(
        alias_generator=to_camel, populate_by_name=True, extra="forbid", arbitrary_types_allowed=True
    )

    # --- the event's own fields ---
    invocation_id: str = ""
    author: str = ""
    actions: EventActions = Field(default_factory=EventActions)
    long_running_tool_ids: set[str] | None = None
    branch: str | None = None
    id: str = Field(default_factory=new_event_id)
    timestamp: float = Field(default_factory=time.time)

    # --- ADK 2 workflow fields ---
    output: Any | None = None
    """A workflow node's output (the next node's input)."""
    node_info: NodeInfo | None = None
    """The node run that wrote this event: a workflow node's, or an agent's as google-adk 2.13 names it
    (``weather@1``, ``desk@1/billing@1``, ``""`` for a user's message; see ``agents.paths``). None on events
    made outside a Runner's agents."""

    # ADK 2's shorthands for node code: ``Event(output=..., state={...}, route=..., message=..., node_path=...)``.
    # Input-only fields (never stored, moved into their real fields right after construction): parsing stored
    # JSON, the hot path of every session read, keeps pydantic's direct path, which a model validator would not.
    state_shorthand: dict[str, Any] | None = Field(default=None, validation_alias="state", exclude=True, repr=False)
    route_shorthand: Any = Field(default=None, validation_alias="route", exclude=True, repr=False)
    message_shorthand: Any = Field(default=None, validation_alias="message", exclude=True, repr=False)
    node_path_shorthand: str | None = Field(default=None, validation_alias="node_path", exclude=True, repr=False)

    def model_post_init(self, context: Any) -> None:
        if (self.state_shorthand is not None or self.route_shorthand is not None
                or self.message_shorthand is not None or self.node_path_shorthand is not None):
            self._apply_shorthands()

    def _apply_shorthands(self) -> None:
        if self.state_shorthand is not None:
            self.actions.state_delta = dict(self.state_shorthand)
        if self.route_shorthand is not None:
            self.actions.route = self.route_shorthand
        if self.message_shorthand is not None:
            if self.content is not None:
                raise ValueError("'message' and 'content' are mutually exclusive. Use one or the other.")
            self.content = _as_content(self.message_shorthand)
        if self.node_path_shorthand is not None:
            self.node_info = (self.node_info or NodeInfo()).model_copy(update={"path": self.node_path_shorthand})
        self.state_shorthand = self.route_shorthand = self.message_shorthand = self.node_path_shorthand = None

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

    @property
    def message(self) -> types.Content | None:
        """ADK 2's name for ``content``."""
        return self.content

    @property
    def node_name(self) -> str:
        """The name of the workflow node that wrote this event ('' for checkpoints and non-workflow events)."""
        if self.node_info is None or self.actions.agent_state or self.actions.end_of_agent:
            return ""
        return self.node_info.name

    def to_json(self) -> str:
        """The wire form as a JSON string."""
        return self.model_dump_json(by_alias=True, exclude_none=True)


def _as_content(message: Any) -> types.Content:
    """A message given as text, a Part, a list of Parts or a Content, as a Content (role ``user`` unless the
    Content says otherwise, as google-genai's content conversion makes it and ADK 2.13 stores it)."""
    if isinstance(message, types.Content):
        return message
    if isinstance(message, str):
        return types.Content(role="user", parts=[types.Part(text=message)])
    if isinstance(message, types.Part):
        return types.Content(role="user", parts=[message])
    if isinstance(message, list):
        return types.Content(role="user", parts=[
            types.Part(text=item) if isinstance(item, str) else item for item in message])
    raise ValueError(f"message must be text, a Part, a list of Parts or a Content, not {type(message).__name__}")

