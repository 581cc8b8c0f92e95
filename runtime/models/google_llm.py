"""The Gemini model under ADK's module path (``google.adk.models.google_llm``)."""

from .gemini import Gemini

__all__ = ["Gemini"]
