"""EventActions: the side effects an event asks the Runner to commit."""

from __future__ import annotations

from typing import Any

from google.genai import types
from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel

from .tool_confirmation import ToolConfirmation
from .ui_widget import UiWidget


class EventCompaction(BaseModel):
    """A summary standing for the session's events whose timestamps fall in ``[start_timestamp, end_timestamp]``.

    The model is shown ``compacted_content`` in their place (see ``flows.compacted_history``); the events
    themselves stay in the history.
    """

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="forbid")

    start_timestamp: float
    """Timestamp (seconds) of the first summarised event."""

    end_timestamp: float
    """Timestamp (seconds) of the last summarised event."""

    compacted_content: types.Content
    """The summary, role ``model``."""


class EventActions(BaseModel):
    """What committing an event changes: state, artifacts, control flow."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="forbid")

    skip_summarization: bool | None = None
    """The function response is final: the model is not called again to summarise it."""

    state_delta: dict[str, Any] = Field(default_factory=dict)
    """Keys to set in state, by prefix scope (none, ``user:``, ``app:``; ``temp:`` is never stored)."""

    artifact_delta: dict[str, int] = Field(default_factory=dict)
    """Artifact filename -> version saved by this event."""

    transfer_to_agent: str | None = None
    """Hand control to the named agent."""

    escalate: bool | None = None
    """Leave the enclosing LoopAgent (or signal a parent that this agent is done)."""

    requested_auth_configs: dict[str, Any] = Field(default_factory=dict)
    """Function call id -> auth configuration a tool asked for."""

    requested_tool_confirmations: dict[str, ToolConfirmation] = Field(default_factory=dict)
    """Function call id -> the confirmation a tool asked for before it may run (ADK's tool confirmation)."""

    end_of_agent: bool | None = None
    """The authoring agent finished its part of the invocation (used to resume workflows)."""

    agent_state: dict[str, Any] | None = None
    """Checkpoint of a workflow agent's progress, so a resumed invocation continues where it stopped."""

    render_ui_widgets: list[UiWidget] | None = None
    """Widgets a UI renders beside this event (``renderUiWidgets`` on the wire; see ``ToolContext.render_ui_widget``)."""

    compaction: EventCompaction | None = None

    route: bool | int | str | list[bool | int | str] | None = None
    """The route(s) a workflow node took: its outgoing edges with a matching route are followed."""
    """This event summarises earlier events (ADK's events compaction; see ``apps.compaction``)."""

    rewind_before_invocation_id: str | None = None
    """Set only on the event a rewind commits: this invocation and every event after its first one are undone
    (``rewindBeforeInvocationId`` on the wire; see ``sessions.rewind`` and ``events.rewinds``)."""

    def is_empty(self) -> bool:
        """True when committing these actions would change nothing."""
        return not (
            self.skip_summarization
            or self.state_delta
            or self.artifact_delta
            or self.transfer_to_agent
            or self.escalate
            or self.requested_auth_configs
            or self.requested_tool_confirmations
            or self.end_of_agent
            or self.agent_state is not None
            or self.compaction is not None
            or bool(self.render_ui_widgets)
            or self.rewind_before_invocation_id is not None
            or self.route is not None
        )


_EMPTY = EventActions()
_FACTORIES = tuple((name, field.default_factory) for name, field in EventActions.model_fields.items()
                   if field.default_factory is not None)


def empty_actions() -> EventActions:
    """``EventActions()`` without pydantic's validation of its defaults: the hot path makes several per event (every
    event, callback context and tool context gets one). Its dicts are new ones (they are filled in place); no
    field counts as set, as after ``EventActions()``."""
    actions = object.__new__(EventActions)
    values = _EMPTY.__dict__.copy()
    for name, factory in _FACTORIES:
        values[name] = factory()
    object.__setattr__(actions, "__dict__", values)
    object.__setattr__(actions, "__pydantic_extra__", None)
    object.__setattr__(actions, "__pydantic_fields_set__", set())
    object.__setattr__(actions, "__pydantic_private__", None)
    return actions
