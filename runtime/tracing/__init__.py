"""Trace spans of agent runs, named as ADK names them (``invoke_agent``, ``call_llm``, ``execute_tool``).

A Runner given a ``span_store`` records where each run's time went: one span per agent run, model call and
tool call, buffered in memory and saved once when the run ends. ``GET /dev/apps/{app}/debug/trace/session/{sid}``
answers them in ADK's trace format, so the dev UI's Traces view shows them. ``RedisSpanStore`` loads lazily
(it imports redis).
"""

from .recorder import Span, SpanRecorder
from .store import BaseSpanStore, InMemorySpanStore

__all__ = ["BaseSpanStore", "InMemorySpanStore", "RedisSpanStore", "Span", "SpanRecorder"]


def __getattr__(name: str):
    if name == "RedisSpanStore":
        from .redis_span_store import RedisSpanStore

        return RedisSpanStore
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
