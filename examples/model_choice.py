"""Pick the examples' model: Gemini when GOOGLE_API_KEY (or Vertex settings) is set, else the offline script."""

from __future__ import annotations

import os
from collections.abc import Callable

from runtime.models import LlmRequest, ScriptedLlm

GEMINI_MODEL = os.environ.get("AGENTQ_GEMINI_MODEL", "gemini-2.0-flash")


def gemini_configured() -> bool:
    """True when google-genai has credentials: an API key or Vertex AI settings."""
    if os.environ.get("GOOGLE_API_KEY") or os.environ.get("GEMINI_API_KEY"):
        return True
    return os.environ.get("GOOGLE_GENAI_USE_VERTEXAI", "").lower() in ("1", "true")


def pick_model(responder: Callable[[LlmRequest], object]):
    """``GEMINI_MODEL`` (a model name the registry resolves to Gemini) or a ScriptedLlm driven by ``responder``."""
    if gemini_configured():
        return GEMINI_MODEL
    return ScriptedLlm(responder=responder)


def describe_model(model) -> str:
    """One line saying which model an example uses."""
    if isinstance(model, str):
        return f"model: Gemini {model!r} (GOOGLE_API_KEY is set)"
    return "model: offline ScriptedLlm (set GOOGLE_API_KEY to use Gemini)"
