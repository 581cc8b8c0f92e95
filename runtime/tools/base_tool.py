"""BaseTool: something a model can call by name."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from google.genai import types

if TYPE_CHECKING:
    from ..contexts.tool_context import ToolContext
    from ..models.llm_request import LlmRequest


class BaseTool:
    """A tool the model can call. Subclasses declare themselves and run.

    ``is_long_running`` tools pause the invocation until a client answers the call.
    ``idempotent`` tools may be re-run when a previous attempt's outcome is unknown (see ``tool_journal``).
    """

    answers_as_agent: ClassVar[bool] = False
    """True when the tool's answer is another agent's reply (AgentTool): with ``skip_summarization`` it
    becomes the caller's final answer, so the flow also shows it as text. A class flag, so the flow (below the
    Runner that AgentTool needs) does not import AgentTool to recognise it."""

    def __init__(
        self, *, name: str, description: str = "", is_long_running: bool = False, idempotent: bool = False
    ):
        self.name = name
        self.description = description
        self.is_long_running = is_long_running
        self.idempotent = idempotent

    def _get_declaration(self) -> types.FunctionDeclaration | None:
        """The declaration sent to the model; None keeps the tool out of the request."""
        return None

    async def check_require_confirmation(self, args: dict[str, Any], tool_context: ToolContext) -> bool:
        """True when this call must be confirmed by a person before it runs (never, unless overridden)."""
        return False

    async def process_llm_request(self, *, tool_context: ToolContext, llm_request: LlmRequest) -> None:
        """Add this tool to an outgoing request: its declaration, and itself under its name in ``tools_dict``.

        For code that builds requests itself, as with ADK. The LlmAgent flow does not call it: it sends the
        declarations of ``_get_declaration()``, built once per tool list."""
        llm_request.append_tools([self])

    async def run_async(self, *, args: dict[str, Any], tool_context: ToolContext) -> Any:
        """Run the tool with the model's arguments; the result becomes the function response."""
        raise NotImplementedError(f"{type(self).__name__} does not implement run_async")

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r})"
