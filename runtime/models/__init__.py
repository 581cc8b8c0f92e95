"""Models (``google.adk.models`` in ADK): the BaseLlm seam, Gemini, and the offline ScriptedLlm."""

from .base_llm import BaseLlm
from .llm_request import LlmRequest
from .llm_response import LlmResponse
from .registry import LLMRegistry
from .scripted_llm import ScriptedLlm, call

__all__ = ["BaseLlm", "Gemini", "LLMRegistry", "LlmRequest", "LlmResponse", "ScriptedLlm", "call"]


def __getattr__(name: str):
    if name == "Gemini":
        from .gemini import Gemini

        return Gemini
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
