"""OpenTelemetry spans of agent runs, opened beside the stored ones, and the W3C trace context that links runs.

Off until a process installs a tracer provider (``otel_setup.configure_from_env`` does it when the ``OTEL_*``
settings name an endpoint): until then ``enabled()`` is False, the Runner's span recorder mirrors nothing and the
only cost is one attribute check per span. The trace context still travels when it is off here: a caller's
``traceparent`` is kept with the invocation (``current_traceparent``) for a worker that does export.
"""

from __future__ import annotations

from typing import Any

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

TRACER_NAME = "agentq"
_W3C = TraceContextTextMapPropagator()
_tracer: trace.Tracer | None = None


def enabled() -> bool:
    """True once ``use_tracer_provider`` installed a provider: spans are opened and exported."""
    return _tracer is not None


def tracer() -> trace.Tracer:
    """The tracer agentq's spans come from; a non-recording one while tracing is off."""
    return _tracer or trace.NoOpTracer()


def use_tracer_provider(provider: trace.TracerProvider | None) -> None:
    """Open agentq's spans on ``provider`` from now on (None: stop opening them)."""
    global _tracer
    _tracer = provider.get_tracer(TRACER_NAME) if provider is not None else None


def current_traceparent() -> str | None:
    """The W3C ``traceparent`` of the span current here: one this process opened, or a caller's that came with
    its request (``context_of``); None when there is none."""
    carrier: dict[str, str] = {}
    _W3C.inject(carrier)
    return carrier.get("traceparent")


def context_of(traceparent: str | None, base: otel_context.Context | None = None) -> otel_context.Context | None:
    """A context whose current span is the (remote) span ``traceparent`` names; None for a missing or malformed
    one (a bad header is ignored, as W3C asks)."""
    if not traceparent:
        return None
    found = _W3C.extract({"traceparent": traceparent}, context=base)
    return found if trace.get_current_span(found).get_span_context().is_valid else None


def span_context_of(traceparent: str | None) -> trace.SpanContext | None:
    """The span context ``traceparent`` names (for a span link), None for a missing or malformed one."""
    found = context_of(traceparent)
    return trace.get_current_span(found).get_span_context() if found is not None else None


def attach(context: otel_context.Context) -> object:
    """Make ``context`` current in this task; pass the token to ``detach``."""
    return otel_context.attach(context)


def detach(token: object) -> None:
    """Undo ``attach``."""
    otel_context.detach(token)


class OtelMirror:
    """Opens an OpenTelemetry span for each span a ``SpanRecorder`` starts: same name, same attributes, same
    parent, under the context that was current when the run began (the worker's run span)."""

    def __init__(self) -> None:
        self._tracer = tracer()
        self._root = otel_context.get_current()

    def start(self, name: str, parent: Any, attributes: dict[str, Any]) -> trace.Span:
        """A started span under ``parent`` (an OpenTelemetry span; None: the run's context)."""
        where = trace.set_span_in_context(parent, self._root) if parent is not None else self._root
        return self._tracer.start_span(name, context=where, attributes=_semconv(attributes))

    @staticmethod
    def end(span: trace.Span, attributes: dict[str, Any], *, close: bool) -> None:
        """Add ``attributes`` to ``span``; end it when ``close``. An ``error.type`` marks it failed."""
        if attributes:
            span.set_attributes(_semconv(attributes))
            if "error.type" in attributes:
                span.set_status(trace.Status(trace.StatusCode.ERROR, str(attributes["error.type"])))
        if close:
            span.end()


def _semconv(attributes: dict[str, Any]) -> dict[str, Any]:
    """The attributes as the GenAI conventions type them: finish reasons are a list of lower-case strings
    (the stored spans keep ADK's dev-UI form, one string)."""
    reasons = attributes.get("gen_ai.response.finish_reasons")
    if isinstance(reasons, str):
        return {**attributes, "gen_ai.response.finish_reasons": [reasons.lower()]}
    return attributes
