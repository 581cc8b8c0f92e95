"""Resolve a model name string (``LlmAgent(model='gemini-2.5-flash')``) to a BaseLlm: ``LLMRegistry``."""

from __future__ import annotations

import re

from ..errors import UsageError
from .base_llm import BaseLlm

_registered: list[type[BaseLlm]] = []


class LLMRegistry:
    """The model classes that serve model names (ADK's ``LLMRegistry``; all static).

    A class serves the names matching one of its ``supported_models()`` patterns. Later registrations come
    first, and Gemini serves what no registered class does. ``"prefix:name"`` picks the class by its name
    (``"gemini:gemini-2.5-flash"``; ``"my:x"`` for a registered ``MyLlm``) and hands it ``name``.
    """

    @staticmethod
    def register(llm_cls: type[BaseLlm]) -> None:
        """Make ``llm_cls`` serve the names matching its ``supported_models()`` patterns."""
        if llm_cls not in _registered:
            _registered.insert(0, llm_cls)

    @staticmethod
    def resolve(model: str) -> type[BaseLlm]:
        """The class that serves ``model``; UsageError (a ValueError) when none does."""
        classes = _classes()
        prefix, _, _ = model.partition(":")
        if prefix != model:
            for llm_cls in classes:
                if _names_class(prefix, llm_cls):
                    return llm_cls
        for llm_cls in classes:
            if any(re.fullmatch(pattern, model) for pattern in llm_cls.supported_models()):
                return llm_cls
        raise UsageError(
            f"Model {model!r} not found. Register a BaseLlm subclass serving it (LLMRegistry.register) "
            "or pass a BaseLlm instance as the agent's model."
        )

    @staticmethod
    def new_llm(model: str) -> BaseLlm:
        """A new instance of the class that serves ``model`` (without a matching class-name prefix)."""
        llm_cls = LLMRegistry.resolve(model)
        prefix, _, name = model.partition(":")
        return llm_cls(model=name if name and _names_class(prefix, llm_cls) else model)


def _classes() -> list[type[BaseLlm]]:
    # Imported here because google-genai's client is heavy; after the first call this is a dict lookup.
    from .gemini import Gemini

    return [*_registered, Gemini]


def _names_class(prefix: str, llm_cls: type[BaseLlm]) -> bool:
    """True when ``prefix`` is the class's name, with or without its 'Llm' ending, in any case."""
    name = llm_cls.__name__.lower()
    return prefix.lower() in {name, name.removesuffix("llm")}


def register(llm_class: type[BaseLlm]) -> None:
    """``LLMRegistry.register``."""
    LLMRegistry.register(llm_class)


def resolve(model_name: str) -> BaseLlm:
    """A new instance of the class that serves ``model_name`` (``LLMRegistry.new_llm``)."""
    return LLMRegistry.new_llm(model_name)
