"""BaseLlm: the model seam. Subclass it and implement ``generate_content_async``."""

from __future__ import annotations

import abc
from collections.abc import AsyncGenerator

from pydantic import BaseModel, ConfigDict

from .llm_request import LlmRequest
from .llm_response import LlmResponse


class BaseLlm(BaseModel, abc.ABC):
    """A model backend. Subclasses may declare their own fields and mutate them (the model is not frozen)."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    model: str
    """The model name, e.g. 'gemini-2.5-flash'."""

    @classmethod
    def supported_models(cls) -> list[str]:
        """Regular expressions of the model names this class serves (for string model names)."""
        return []

    @abc.abstractmethod
    def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        """Yield the answer: one LlmResponse, or partial chunks and then the aggregated final one when streaming."""
        raise NotImplementedError
