"""ToolContext: what a running tool may read and change."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..agents.callback_context import CallbackContext
from ..events import EventActions

if TYPE_CHECKING:
    from ..agents.invocation_context import InvocationContext


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
    ):
        super().__init__(invocation_context, event_actions=event_actions)
        self.function_call_id = function_call_id

    @property
    def invocation_context(self) -> InvocationContext:
        """The invocation this call belongs to."""
        return self._invocation_context
