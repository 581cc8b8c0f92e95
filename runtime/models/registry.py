"""Resolve a model name string (``LlmAgent(model='gemini-2.5-flash')``) to a BaseLlm instance."""

from __future__ import annotations

import re

from ..errors import UsageError
from .base_llm import BaseLlm

_registered: list[type[BaseLlm]] = []


def register(llm_class: type[BaseLlm]) -> None:
    """Make ``llm_class`` serve the names matching its ``supported_models()`` patterns (ahead of earlier ones)."""
    if llm_class not in _registered:
        _registered.insert(0, llm_class)


def resolve(model_name: str) -> BaseLlm:
    """A new instance of the class that serves ``model_name``; Gemini is the fallback after registered classes."""
    # Imported here because google-genai's client is heavy; after the first call this is a dict lookup.
    from .gemini import Gemini

    for llm_class in [*_registered, Gemini]:
        if any(re.fullmatch(pattern, model_name) for pattern in llm_class.supported_models()):
            return llm_class(model=model_name)
    raise UsageError(f"no model class serves {model_name!r}; pass a BaseLlm instance instead")
