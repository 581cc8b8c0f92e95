"""ToolContext: what a running tool may read and change."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..auth.auth_config import AuthConfig
from ..auth.credentials import AuthCredential
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

    def request_credential(self, auth_config: AuthConfig) -> None:
        """Ask the user to consent (OAuth 2): once this call is answered, the invocation parks on an
        ``adk_request_credential`` call; when the flow completes, the tool is called again and
        ``get_auth_response(auth_config)`` returns the credential (see runtime.auth.requests)."""
        if not self.function_call_id:
            raise UsageError("request_credential needs the function call id; it works only inside a tool call")
        if not isinstance(auth_config, AuthConfig):
            raise UsageError(f"request_credential takes a runtime.auth.AuthConfig, not {type(auth_config).__name__}")
        self._invocation_context.run.auth_configs[self.function_call_id] = auth_config.model_copy(deep=True)
        self._event_actions.requested_auth_configs[self.function_call_id] = auth_config.redacted().wire()

    def get_auth_response(self, auth_config: AuthConfig) -> AuthCredential | None:
        """The credential the user just gave for ``auth_config`` (loaded into this run when the call that
        requested it was answered), or None. It is read from the run, never from session state."""
        return self._invocation_context.run.credentials.get(auth_config.credential_key)

    async def load_credential(self, auth_config: AuthConfig) -> AuthCredential | None:
        """The user's stored credential for ``auth_config`` from the Runner's credential service, refreshed when
        it expired (None: none stored, the refresh failed, or the Runner has no credential service)."""
        service = self._invocation_context.credential_service
        if service is None:
            return None
        return await service.load_credential(auth_config, self)

    @property
    def invocation_context(self) -> InvocationContext:
        """The invocation this call belongs to."""
        return self._invocation_context
