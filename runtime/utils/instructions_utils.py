"""State injection for InstructionProviders, at ADK's path (``google.adk.utils.instructions_utils``)."""

from __future__ import annotations

from ..contexts.readonly_context import ReadonlyContext
from ..flows import instructions

__all__ = ["ReadonlyContext", "inject_session_state"]


async def inject_session_state(template: str, readonly_context: ReadonlyContext) -> str:
    """``template`` with ``{key}``, ``{key?}``, ``{app:k}``, ``{artifact.f}`` filled in as a string instruction is.

    For an InstructionProvider, whose text is otherwise used verbatim, that wants templating after all.
    """
    return await instructions.inject_session_state(template, readonly_context._invocation_context)
