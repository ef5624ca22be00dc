"""OpenTelemetry tracing of the server, exported over OTLP when the environment asks.

Off unless `OTEL_EXPORTER_OTLP_ENDPOINT` (or `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`) is
set: then nothing is imported beyond the API, no interceptor is added, and the domain's
spans (`scorewire.core.tracing`) are skipped. On, each server process installs an SDK
tracer provider (service name `OTEL_SERVICE_NAME`, default `scorewire`; the other
standard `OTEL_*` variables apply: headers, timeouts, `OTEL_TRACES_SAMPLER`) exporting
in batches over OTLP/gRPC (`http://` endpoint: plaintext; `https://`: TLS), and a gRPC
server interceptor makes a span per RPC whose parent is the caller's W3C `traceparent`.
Only OTLP/gRPC is installed: `OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf` is refused at
start-up rather than silently not exporting.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from scorewire.core import tracing
from scorewire.core.errors import StartupError

ENDPOINT_VARIABLES = ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_ENDPOINT")


@dataclass(slots=True)
class Tracing:
    """The installed tracer provider and the interceptor that opens a span per RPC."""

    provider: Any
    interceptor: Any

    async def aclose(self) -> None:
        """Export the spans still buffered, then stop the exporter."""
        self.provider.shutdown()


def tracing_endpoint() -> str | None:
    """The OTLP endpoint the environment names, or None (tracing off)."""
    for name in ENDPOINT_VARIABLES:
        value = os.environ.get(name, "").strip()
        if value:
            return value
    return None


def start_tracing() -> Tracing | None:
    """Install OTLP tracing when an endpoint is set (see the module docstring), else None."""
    if tracing_endpoint() is None:
        return None
    protocol = (
        os.environ.get("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL")
        or os.environ.get("OTEL_EXPORTER_OTLP_PROTOCOL")
        or "grpc"
    ).strip()
    if protocol != "grpc":
        raise StartupError(
            f"OTEL_EXPORTER_OTLP_PROTOCOL={protocol} is not supported: scorewire exports "
            "traces over OTLP/gRPC only (unset it, or set it to grpc)"
        )
    from opentelemetry import trace
    from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter
    from opentelemetry.instrumentation.grpc import aio_server_interceptor
    from opentelemetry.sdk.resources import SERVICE_NAME, Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    name = os.environ.get("OTEL_SERVICE_NAME", "").strip() or "scorewire"
    provider = TracerProvider(resource=Resource.create({SERVICE_NAME: name}))
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
    trace.set_tracer_provider(provider)
    tracing.ENABLED = True
    interceptor = aio_server_interceptor(tracer_provider=provider)  # type: ignore[no-untyped-call]
    return Tracing(provider, interceptor)
