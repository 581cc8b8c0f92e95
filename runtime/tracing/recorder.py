"""SpanRecorder: the spans of one run of one invocation, kept in memory until the run ends.

The trace id is the invocation id, so every run of an invocation (the first, and each resume after a parked
call is answered) lands in one trace: the dev UI shows one trace per invocation. Times are epoch nanoseconds,
as OpenTelemetry's. While the process exports OpenTelemetry spans, each span also opens a twin there
(``otel.OtelMirror``), under the caller's W3C trace rather than the invocation id.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from typing import Any

from .otel import OtelMirror

INVOCATION_ID = "gcp.vertex.agent.invocation_id"
SESSION_ID = "gcp.vertex.agent.session_id"
EVENT_ID = "gcp.vertex.agent.event_id"
CONVERSATION_ID = "gen_ai.conversation.id"
OPERATION = "gen_ai.operation.name"
MAX_VALUE_CHARS = 4096
"""Longer attribute strings (tool arguments and results, model answers) are cut: spans say where time went,
the session's events hold the whole content."""

AttributeValue = str | int | float | bool


@dataclass(slots=True, kw_only=True)
class Span:
    """One timed step: an agent run, a model call or a tool call."""

    name: str
    span_id: str
    parent_span_id: str | None
    start_time: int
    end_time: int | None = None
    attributes: dict[str, AttributeValue] = field(default_factory=dict)
    otel: Any = None
    """Its OpenTelemetry twin, while the process exports spans (``runtime.tracing.otel``)."""

    def to_json(self, trace_id: str) -> dict[str, Any]:
        """ADK's trace span shape (``WebUiSpan``): name, times, ids, attributes, logs."""
        return {"name": self.name, "start_time": self.start_time, "end_time": self.end_time, "trace_id": trace_id,
                "span_id": self.span_id, "parent_span_id": self.parent_span_id, "attributes": self.attributes,
                "logs": []}


def clip(value: str) -> str:
    """``value``, cut to MAX_VALUE_CHARS."""
    return value if len(value) <= MAX_VALUE_CHARS else value[:MAX_VALUE_CHARS] + "…"


class SpanRecorder:
    """Collects the spans of one run; ``finished()`` closes what is still open (a paused or failed run)."""

    def __init__(self, invocation_id: str, session_id: str, mirror: OtelMirror | None = None):
        """``mirror``: opens an OpenTelemetry span beside each span recorded here (None: tracing is off)."""
        self.invocation_id = invocation_id
        self.session_id = session_id
        self._spans: list[Span] = []
        self._mirror = mirror

    def start(self, name: str, parent: Span | None, **attributes: AttributeValue) -> Span:
        """Open a span under ``parent`` (None: a root); the invocation and session ids are always attributes."""
        span = Span(name=name, span_id=os.urandom(8).hex(), parent_span_id=parent.span_id if parent else None,
                    start_time=time.time_ns(),
                    attributes={INVOCATION_ID: self.invocation_id, SESSION_ID: self.session_id, **attributes})
        self._spans.append(span)
        if self._mirror is not None:
            span.otel = self._mirror.start(name, parent.otel if parent else None, span.attributes)
        return span

    @staticmethod
    def end(span: Span | None, **attributes: AttributeValue) -> None:
        """Close ``span`` (once: a second call only adds attributes) with more attributes."""
        if span is None:
            return
        span.attributes.update(attributes)
        closing = span.end_time is None
        if closing:
            span.end_time = time.time_ns()
        if span.otel is not None:
            OtelMirror.end(span.otel, attributes, close=closing)

    def finished(self) -> list[dict[str, Any]]:
        """Every span as JSON, those still open closed now."""
        now = time.time_ns()
        for span in self._spans:
            if span.end_time is None:
                span.end_time = now
                if span.otel is not None:
                    span.otel.end()
        return [span.to_json(self.invocation_id) for span in self._spans]
