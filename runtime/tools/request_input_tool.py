"""``request_input``: the long-running tool a model calls to ask a person a question (ADK's ``adk_request_input``).

The call pauses the invocation like any long-running call; the person's FunctionResponse (matching the
optional JSON schema the model gave) resumes it, and the model reads the answer as the tool's result.
"""

from __future__ import annotations

from typing import Any

from ..events.request_input import REQUEST_INPUT_FUNCTION_CALL_NAME
from .long_running_tool import LongRunningFunctionTool

__all__ = ["REQUEST_INPUT_FUNCTION_CALL_NAME", "request_input"]


def _ask(message: str, response_schema: dict[str, Any] | None = None) -> None:
    """Ask the user a question and wait for the answer.

    Use this when you need clarification or more information before going on.

    Args:
      message: The question to show the user.
      response_schema: A JSON Schema for the expected answer, e.g. {"type": "string"} for free text,
        {"type": "boolean"} for yes or no, or an object schema for structured input.
    """
    return None  # None: no response now; the invocation waits for the person's answer


_ask.__name__ = REQUEST_INPUT_FUNCTION_CALL_NAME
request_input = LongRunningFunctionTool(_ask)
"""Add to an agent's ``tools`` to let its model ask the user for input."""
