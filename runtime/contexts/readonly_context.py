"""ReadonlyContext: what instruction providers may look at."""

from __future__ import annotations

from types import MappingProxyType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from google.genai import types

    from ..sessions import Session
    from .invocation_context import InvocationContext


class ReadonlyContext:
    """A read-only view of the running invocation: its id, agent, user message and state."""

    def __init__(self, invocation_context: InvocationContext):
        self._invocation_context = invocation_context

    @property
    def invocation_id(self) -> str:
        """The id of the running invocation."""
        return self._invocation_context.invocation_id

    @property
    def agent_name(self) -> str:
        """The name of the running agent."""
        return self._invocation_context.agent.name

    @property
    def user_content(self) -> types.Content | None:
        """The user message that started the invocation."""
        return self._invocation_context.user_content

    @property
    def session(self) -> Session:
        """The session being run."""
        return self._invocation_context.session

    @property
    def state(self) -> MappingProxyType[str, Any]:
        """The merged state, read-only."""
        return MappingProxyType(self._invocation_context.session.state)
