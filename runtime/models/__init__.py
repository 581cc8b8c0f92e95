"""Models (``google.adk.models`` in ADK): the BaseLlm seam, Gemini, and the offline ScriptedLlm."""

from ..errors import NotSupportedYetError
from .base_llm import BaseLlm
from .llm_request import LlmRequest
from .llm_response import LlmResponse
from .registry import LLMRegistry
from .scripted_llm import ScriptedLlm, call

__all__ = ["BaseLlm", "Gemini", "LLMRegistry", "LlmRequest", "LlmResponse", "ScriptedLlm", "call"]


# Names google-adk 2.13 exports from google.adk.models that agentq does not provide yet: importing one fails
# naming it (NotSupportedYetError), so an agent moved over from ADK stops at its import, not later.
_NOT_SUPPORTED_YET = frozenset({
    "AnthropicGenerateContentConfig", "ApigeeLlm", "Claude", "FallbackModel", "Gemma", "LiteLlm", "LlmCapabilities",
    "ServiceTier",
})


def __getattr__(name: str):
    if name == "Gemini":
        from .gemini import Gemini

        return Gemini
    if name in _NOT_SUPPORTED_YET:
        raise NotSupportedYetError(__name__, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
