"""Events and their actions (``google.adk.events`` in ADK)."""

from ..ids import new_event_id
from .event import Event
from .event_actions import EventActions
from .node_info import NodeInfo
from .request_input import RequestInput
from .tool_confirmation import ToolConfirmation

__all__ = ["Event", "EventActions", "NodeInfo", "RequestInput", "ToolConfirmation", "new_event_id"]
