"""ToolContext: what a running tool may read and change."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..errors import UsageError
from ..events import EventActions, ToolConfirmation
from .callback_context import CallbackContext

if TYPE_CHECKING:
    from .invocation_context import InvocationContext


class ToolContext(CallbackContext):
    """The context of one function call.

    Writes to ``state``, saved artifacts and ``actions`` (transfer, escalate, skip_summarization) are committed
    with the call's function response event.
    """

    def __init__(
        self,
        invocation_context: InvocationContext,
        *,
        function_call_id: str | None = None,
        event_actions: EventActions | None = None,
        tool_confirmation: ToolConfirmation | None = None,
    ):
        super().__init__(invocation_context, event_actions=event_actions)
        self.function_call_id = function_call_id
        self.tool_confirmation = tool_confirmation
        """The person's answer when this call runs after a confirmation; None on the first attempt."""

    def request_confirmation(self, *, hint: str | None = None, payload=None) -> None:
        """Ask a person to confirm this call: the invocation pauses after the call is answered, and once the
        confirmation arrives the tool is called again with ``tool_confirmation`` set (confirmed, payload)."""
        if not self.function_call_id:
            raise UsageError("request_confirmation needs the function call id; it works only inside a tool call")
        self._event_actions.requested_tool_confirmations[self.function_call_id] = ToolConfirmation(
            hint=hint or "", payload=payload
        )

    @property
    def invocation_context(self) -> InvocationContext:
        """The invocation this call belongs to."""
        return self._invocation_context
