"""ToolConfirmation: a person's yes or no (and optional data) for one tool call, as ADK 2.x defines it.

It lives beside EventActions (which carries the requests) so that ``events`` need not import ``tools``;
``runtime.tools.ToolConfirmation`` is the same class, at ADK's import path.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel, ConfigDict
from pydantic.alias_generators import to_camel

REQUEST_CONFIRMATION_FUNCTION_CALL_NAME = "adk_request_confirmation"
"""The name of the function call that asks a client to confirm another call (ADK's name)."""


class ToolConfirmation(BaseModel):
    """A confirmation request (``hint``, ``payload``) or its answer (``confirmed``, ``payload``)."""

    model_config = ConfigDict(extra="forbid", alias_generator=to_camel, populate_by_name=True)

    hint: str = ""
    """Why the confirmation is needed, in words for the person answering."""
    confirmed: bool = False
    """The answer: True runs the tool, False answers the model that the call was rejected."""
    payload: Any | None = None
    """Data the tool asks for or the person sends back (JSON-serialisable)."""

    @classmethod
    def from_response_dict(cls, response: dict[str, Any]) -> ToolConfirmation:
        """Read an answer from a FunctionResponse's ``response``.

        Accepts the plain form (``{"confirmed": true, "payload": ...}``) and ADK's web client wrapper
        (``{"response": "<the same as a JSON string>"}``). Raises ValueError (pydantic's ValidationError or
        json's JSONDecodeError) when it is neither.
        """
        if isinstance(response, dict) and set(response) == {"response"} and isinstance(response["response"], str):
            response = json.loads(response["response"])
        if not isinstance(response, dict) or not isinstance(response.get("confirmed"), bool):
            # pydantic's lax mode would take "yes" or 1 for True: an approval must be an explicit boolean
            raise ValueError(f"a confirmation answer needs a boolean 'confirmed', got {response!r}")
        return cls.model_validate(response)
