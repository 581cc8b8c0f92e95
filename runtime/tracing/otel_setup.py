"""Turning OpenTelemetry export on from the standard ``OTEL_*`` settings, at a process's start.

Export is on only when ``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`` or ``OTEL_EXPORTER_OTLP_ENDPOINT`` names an
endpoint and ``OTEL_SDK_DISABLED`` is not ``true``: then an SDK tracer provider with a batching OTLP/HTTP
exporter is installed (the service named by ``OTEL_SERVICE_NAME``, else the process's role). Otherwise nothing
is installed and the SDK and its exporter are not even imported. The exporter reads its other settings itself
(headers, timeout, compression, ``OTEL_BSP_*`` for batching, ``OTEL_TRACES_SAMPLER``).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from typing import Any

from . import otel

ENDPOINT_SETTINGS = ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_ENDPOINT")
log = logging.getLogger("agentq.tracing")
_provider: Any = None


def export_endpoint(environ: Mapping[str, str] = os.environ) -> str | None:
    """Where spans go (the traces endpoint, else the base endpoint), None when export is off."""
    if environ.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return None
    for name in ENDPOINT_SETTINGS:
        if environ.get(name, "").strip():
            return environ[name].strip()
    return None


def configure_from_env(default_service_name: str, environ: Mapping[str, str] = os.environ) -> bool:
    """Install the exporting tracer provider when the settings ask for it (once per process); True when spans
    are exported. ``default_service_name``: the ``service.name`` when ``OTEL_SERVICE_NAME`` is not set."""
    global _provider
    endpoint = export_endpoint(environ)
    if endpoint is None:
        return False
    if _provider is None:
        from opentelemetry import trace
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.resources import SERVICE_NAME, Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor

        # Resource.create merges OTEL_RESOURCE_ATTRIBUTES and OTEL_SERVICE_NAME over this default.
        provider = TracerProvider(resource=Resource.create({SERVICE_NAME: default_service_name}))
        provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
        trace.set_tracer_provider(provider)  # so a user's own instrumentation joins the same traces
        otel.use_tracer_provider(provider)
        _provider = provider
        log.info("OpenTelemetry: exporting spans to %s as service %r", endpoint,
                 provider.resource.attributes.get(SERVICE_NAME))
    return True


def flush(timeout_s: float = 5.0) -> None:
    """Send the spans still batched (a process about to exit); nothing when export is off."""
    if _provider is not None:
        _provider.force_flush(int(timeout_s * 1000))
