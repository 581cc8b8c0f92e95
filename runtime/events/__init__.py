"""Events and their actions (``google.adk.events`` in ADK)."""

from ..ids import new_event_id
from .event import Event
from .event_actions import EventActions
from .tool_confirmation import ToolConfirmation

__all__ = ["Event", "EventActions", "ToolConfirmation", "new_event_id"]
