"""LongRunningFunctionTool: a tool whose real answer arrives later, from a client."""

from __future__ import annotations

from typing import Any

from google.genai import types

from ..errors import UsageError
from .function_tool import FunctionTool

_NOTE = (
    "NOTE: This is a long-running operation. Do not call this tool again if it has already returned some status."
)


class LongRunningFunctionTool(FunctionTool):
    """Its call pauses the invocation until a FunctionResponse with the same call id is sent.

    What the function returns (a ticket, a status) is sent to the model at once; None sends nothing.

    The answer's shape can be declared beside the tool, so a person answers with a form and buttons instead
    of typing JSON, and the server refuses an answer that does not match (400 naming the field):

    - ``answer_schema``: a pydantic model class, a Python type or a JSON Schema dict. An object schema is the
      answer itself; any other is answered as ``{"result": value}``.
    - ``quick_answers``: named answers shown as one-click buttons, e.g.
      ``{"Approve": {"status": "approved"}, "Reject": {"status": "rejected"}}`` (each checked against
      ``answer_schema`` here, when the tool is made).

    Both travel with the pending call (``answer`` on the invocation record, ``answerSchema`` and
    ``quickAnswers`` on ``GET /invocations/{id}``).
    """

    def __init__(self, func, *, idempotent: bool = False, answer_schema: Any = None,
                 quick_answers: dict[str, dict[str, Any]] | None = None):
        super().__init__(func, idempotent=idempotent, is_long_running=True)
        self.answer_shape = _answer_shape(self.name, answer_schema, quick_answers)
        """``{"schema": ..., "quickAnswers": [{"label", "response"}]}`` or None when nothing was declared."""

    def _get_declaration(self) -> types.FunctionDeclaration:
        if self._declaration is None:
            declaration = super()._get_declaration()
            description = f"{declaration.description}\n\n{_NOTE}" if declaration.description else _NOTE
            self._declaration = declaration.model_copy(update={"description": description})
        return self._declaration


def _answer_shape(name: str, schema: Any, quick: dict[str, dict[str, Any]] | None) -> dict[str, Any] | None:
    if schema is None and not quick:
        return None
    from ..events.request_input import json_schema_of

    json_schema = json_schema_of(schema)
    shape: dict[str, Any] = {}
    if json_schema:
        shape["schema"] = json_schema
    if quick:
        from .answer_check import AnswerSchemaError, check_answer

        answers = []
        for label, response in quick.items():
            if not isinstance(label, str) or not label or not isinstance(response, dict):
                raise UsageError(f"tool {name!r}: quick_answers maps a button label to its answer (a dict), "
                                 f"got {label!r}: {response!r}")
            try:
                check_answer(label, name, json_schema, response)
            except AnswerSchemaError as exc:
                raise UsageError(f"tool {name!r}: quick answer {label!r} does not match answer_schema: {exc}") from None
            answers.append({"label": label, "response": response})
        shape["quickAnswers"] = answers
    return shape
