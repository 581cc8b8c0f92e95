"""Events and their actions (``google.adk.events`` in ADK)."""

from .event import Event, new_event_id
from .event_actions import EventActions

__all__ = ["Event", "EventActions", "new_event_id"]
