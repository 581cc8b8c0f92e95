"""LongRunningFunctionTool: a tool whose real answer arrives later, from a client."""

from __future__ import annotations

from google.genai import types

from .function_tool import FunctionTool

_NOTE = (
    "NOTE: This is a long-running operation. Do not call this tool again if it has already returned some status."
)


class LongRunningFunctionTool(FunctionTool):
    """Its call pauses the invocation until a FunctionResponse with the same call id is sent.

    What the function returns (a ticket, a status) is sent to the model at once; None sends nothing.
    """

    def __init__(self, func, *, idempotent: bool = False):
        super().__init__(func, idempotent=idempotent, is_long_running=True)

    def _get_declaration(self) -> types.FunctionDeclaration:
        if self._declaration is None:
            declaration = super()._get_declaration()
            description = f"{declaration.description}\n\n{_NOTE}" if declaration.description else _NOTE
            self._declaration = declaration.model_copy(update={"description": description})
        return self._declaration
