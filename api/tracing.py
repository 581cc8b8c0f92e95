"""The caller's W3C trace context on every request, so an enqueue or an answer stores it with the invocation.

While this process exports spans (``runtime.tracing.otel_setup`` installed the global tracer provider), FastAPI's
own telemetry opens a SERVER span per request, ``{method} {route}``, under the request's ``traceparent`` and makes
it current: the invocation stores that span (``worker.records.store``), and the worker's runs become its children.
While it does not, this middleware makes the request's ``traceparent`` current instead, so a worker that exports
still joins the caller's trace. A request without the header costs one look through its headers.
"""

from __future__ import annotations

from starlette.types import ASGIApp, Receive, Scope, Send

from runtime.tracing import otel


class TraceContext:
    """ASGI middleware: the request's ``traceparent`` made current when no request span is (tracing off here)."""

    def __init__(self, app: ASGIApp):
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or otel.enabled():  # exported: FastAPI's request span is current already
            await self.app(scope, receive, send)
            return
        traceparent = next((value for name, value in scope["headers"] if name == b"traceparent"), None)
        caller = otel.context_of(traceparent.decode("latin-1")) if traceparent is not None else None
        if caller is None:
            await self.app(scope, receive, send)
            return
        token = otel.attach(caller)
        try:
            await self.app(scope, receive, send)
        finally:
            otel.detach(token)
