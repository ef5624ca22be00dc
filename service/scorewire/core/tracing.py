"""OpenTelemetry spans of the domain: case batches, judge and provider calls.

Only the OpenTelemetry API is used here: without an SDK installed as the tracer
provider (the server installs one when `OTEL_EXPORTER_OTLP_ENDPOINT` is set, see
`scorewire.server.otlp`), every span is the API's non-recording span, and `ENABLED`
lets hot paths skip even that.

Attribute names follow the OpenTelemetry GenAI semantic conventions where one fits
(`gen_ai.*`, development status, as of semantic conventions 1.37); scorewire's own are
under `scorewire.*`.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from opentelemetry import trace

TRACER_NAME = "scorewire"

ENABLED = False
"""Whether a recording tracer provider is installed (set by the server at start-up)."""

# GenAI semantic conventions (gen-ai spans and the gen_ai.evaluation.result event).
OPERATION = "gen_ai.operation.name"
PROVIDER = "gen_ai.provider.name"
REQUEST_MODEL = "gen_ai.request.model"
REQUEST_MAX_TOKENS = "gen_ai.request.max_tokens"
REQUEST_TEMPERATURE = "gen_ai.request.temperature"
INPUT_TOKENS = "gen_ai.usage.input_tokens"
OUTPUT_TOKENS = "gen_ai.usage.output_tokens"
EVALUATION_EVENT = "gen_ai.evaluation.result"
EVALUATION_NAME = "gen_ai.evaluation.name"
EVALUATION_SCORE_VALUE = "gen_ai.evaluation.score.value"
EVALUATION_SCORE_LABEL = "gen_ai.evaluation.score.label"
ERROR_TYPE = "error.type"
# scorewire's own.
COST_USD = "scorewire.cost_usd"
CACHED = "scorewire.cached"
CASES = "scorewire.cases"
CHECKS = "scorewire.checks"


def tracer() -> trace.Tracer:
    """scorewire's tracer (from the global provider: a no-op one until the SDK is set)."""
    return trace.get_tracer(TRACER_NAME)


@contextlib.contextmanager
def span(
    name: str, attributes: dict[str, Any] | None = None, *, client: bool = False
) -> Iterator[trace.Span]:
    """A span around the block (a non-recording one when tracing is off)."""
    if not ENABLED:
        yield trace.INVALID_SPAN
        return
    kind = trace.SpanKind.CLIENT if client else trace.SpanKind.INTERNAL
    with tracer().start_as_current_span(name, kind=kind, attributes=attributes) as current:
        yield current


def start_span(name: str, attributes: dict[str, Any] | None = None) -> trace.Span:
    """A span that is not made current (for async generators, whose steps may run in
    other contexts); the caller ends it."""
    if not ENABLED:
        return trace.INVALID_SPAN
    return tracer().start_span(name, attributes=attributes)


def set_attributes(current: trace.Span, **attributes: Any) -> None:
    """Set the attributes that are not None (OpenTelemetry refuses None values)."""
    if current.is_recording():
        current.set_attributes(
            {_NAMES.get(k, k): v for k, v in attributes.items() if v is not None}
        )


_NAMES = {
    "input_tokens": INPUT_TOKENS,
    "output_tokens": OUTPUT_TOKENS,
    "cost_usd": COST_USD,
    "cached": CACHED,
    "error_type": ERROR_TYPE,
}
"""Short keyword names of `set_attributes` -> attribute names."""
