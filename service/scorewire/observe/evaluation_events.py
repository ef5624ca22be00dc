"""`gen_ai.evaluation.result` events over OTLP, one per score of online evaluation.

Each check's score of a sampled observation becomes one event as the OpenTelemetry GenAI
semantic conventions define it (status: development): `gen_ai.evaluation.name` (the
check's name), `gen_ai.evaluation.score.value` (0..1), `gen_ai.evaluation.score.label`
(`pass` or `fail`), `gen_ai.evaluation.explanation`, `gen_ai.response.id` (when the
observation's labels carry one under that key) and, for a check that could not score,
`error.type` (its error code) with no value and no label. The explanation is the score's
reason, cut at `EXPLANATION_MAX` characters, and is sent only with
`OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true`: a reason may quote the output
or a judge's reasoning, and no output text leaves the server in telemetry unless asked.
scorewire's extras are under `scorewire.`: the check type, the judge model (judge-backed
checks), the cost in USD, the rule and the observation id. A check skipped by its
`when:` condition evaluated nothing and sends no event.

**Why log records, not span events.** The conventions model the event as a log-based
event parented to the span of the operation it evaluates: here the caller's span, which
lives in the caller's process and ended long before the score. A span event can only be
added to a span scorewire itself records, so it would hang under a span of scorewire's
invention, not under the caller's. A log record carries any trace id and span id: the
event is an OTLP log record named `gen_ai.evaluation.result` (its `event_name`) whose
trace and span ids are the observation's trace context, so a tracing backend shows it on
the caller's span. The installed SDK (opentelemetry-sdk 1.45) has the logs signal with
`event_name` and an OTLP/gRPC log exporter; its modules are still underscored
(`opentelemetry._logs`, `opentelemetry.sdk._logs`), which is why the SDK is pinned.

**Off unless OTLP is on.** Nothing is set up unless the server exports traces (the
`OTEL_EXPORTER_OTLP_ENDPOINT` that `scorewire.server.otlp` reads;
`OTEL_EXPORTER_OTLP_LOGS_ENDPOINT` sends the events elsewhere) and `OTEL_LOGS_EXPORTER`
is not `none`.

**Bounded, never blocking.** The SDK takes ~0.1 ms to build one record (it validates
every attribute; measured on a busy 2-core machine), so a batch of 256 observations with
five checks would hold the event loop for ~0.1 s. The consumer only hands each rule's
scores to the emitter's own thread (`submit`: a bounded hand-off of `PENDING_BATCHES`
batches; a batch that finds it full is dropped, counted in
`scorewire_observe_events_dropped_total` and logged at most once a minute). That thread
builds the records and gives them to the SDK's batch processor, whose queue is a bounded
deque (`OTEL_BLRP_MAX_QUEUE_SIZE`, default 2,048 records; when full the oldest is dropped
and the SDK logs it, at most once per 20 s), exported in batches by the SDK's thread
(`OTEL_BLRP_SCHEDULE_DELAY`, `OTEL_BLRP_MAX_EXPORT_BATCH_SIZE`). A fault in building an
event is logged and swallowed: an event is never a reason to score again.

The server installs the emitter once at start-up (`install`), as the tracer provider is
installed: the consumer calls the module's `emit`, a no-op until then.
"""

from __future__ import annotations

import asyncio
import logging
import os
import queue
import threading
import time
from collections.abc import Sequence
from typing import Any

from opentelemetry import trace
from opentelemetry.context import Context
from scorewire.core import tracing
from scorewire.core.errors import StartupError
from scorewire.engine.runner import CaseResult
from scorewire.engine.spec import CompiledCheck
from scorewire.observe.rules import Rule
from scorewire.v1 import observe_pb2 as opb

log = logging.getLogger("scorewire.observe")

EVENT = tracing.EVALUATION_EVENT
NAME = tracing.EVALUATION_NAME
SCORE_VALUE = tracing.EVALUATION_SCORE_VALUE
SCORE_LABEL = tracing.EVALUATION_SCORE_LABEL
EXPLANATION = "gen_ai.evaluation.explanation"
RESPONSE_ID = "gen_ai.response.id"
"""Also the observation label a caller sets to name the response it observed."""
ERROR_TYPE = tracing.ERROR_TYPE
CHECK_TYPE = "scorewire.check.type"
JUDGE_MODEL = "scorewire.judge.model"
COST_USD = tracing.COST_USD
RULE = "scorewire.observe.rule"
OBSERVATION_ID = "scorewire.observation.id"

EXPLANATION_MAX = 1_000
"""Characters of a score's reason sent as its explanation (a reason may quote the output)."""
LOGS_ENDPOINT_VARIABLE = "OTEL_EXPORTER_OTLP_LOGS_ENDPOINT"
CAPTURE_CONTENT_VARIABLE = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"
"""The GenAI instrumentations' opt-in to content in telemetry: `true` adds explanations."""
SCOPE = "scorewire.observe"
PENDING_BATCHES = 64
"""Rule batches waiting for the emitting thread (at most 256 observations each) before
more are dropped: a backlog of seconds at the consumer's full speed."""
DROP_LOG_EVERY_S = 60.0
"""Seconds between two warnings about dropped events."""

_Batch = tuple[Rule, Sequence[tuple[opb.Observation, CaseResult]]]


class EvaluationEvents:
    """Builds the events of a rule's scores and hands them to an SDK logger provider."""

    def __init__(
        self,
        provider: Any,
        *,
        judge_model: str = "",
        explanations: bool = False,
        pending: int = PENDING_BATCHES,
        dropped_counter: Any = None,
    ) -> None:
        self._provider = provider
        self._logger = provider.get_logger(SCOPE)
        self._judge_model = judge_model
        """The default judge (`SCOREWIRE_JUDGE_MODEL`): a judge check naming none uses it."""
        self._explanations = explanations
        """Whether a score's reason is sent (it may quote the output)."""
        self._pending: queue.Queue[_Batch | None] = queue.Queue(pending)
        self.dropped = 0
        """Scored observations whose events were dropped because the hand-off was full."""
        self._dropped_counter = dropped_counter
        """The Prometheus counter of `dropped`, or None."""
        self._dropped_logged = 0.0
        self._failed_once = False
        self._thread = threading.Thread(
            target=self._run, name="scorewire-evaluation-events", daemon=True
        )
        self._thread.start()

    def submit(self, rule: Rule, scored: Sequence[tuple[opb.Observation, CaseResult]]) -> None:
        """Hand a rule's recorded scores to the emitting thread; returns at once (when the
        hand-off is full the batch is dropped and counted in `dropped`)."""
        try:
            self._pending.put_nowait((rule, scored))
        except queue.Full:
            self.dropped += len(scored)
            if self._dropped_counter is not None:
                self._dropped_counter.inc(len(scored))
            now = time.monotonic()
            if now - self._dropped_logged >= DROP_LOG_EVERY_S:
                self._dropped_logged = now
                log.warning(
                    "evaluation events of %d observations dropped so far: the OTLP "
                    "emitter is behind",
                    self.dropped,
                )

    def _run(self) -> None:
        while (batch := self._pending.get()) is not None:
            try:
                self.emit(*batch)
            except Exception:  # never the consumer's concern
                log.warning("evaluation events not sent", exc_info=not self._failed_once)
                self._failed_once = True

    def emit(self, rule: Rule, scored: Sequence[tuple[opb.Observation, CaseResult]]) -> None:
        """Build and emit one event per score of each observation now (see the module):
        the emitting thread's work."""
        checks = rule.plan.checks
        now = time.time_ns()
        for obs, result in scored:
            context = caller_context(obs.trace)
            common = {RULE: rule.name, OBSERVATION_ID: obs.observation_id}
            response_id = obs.metadata.labels.get(RESPONSE_ID)
            if response_id:
                common[RESPONSE_ID] = response_id
            for check, score in zip(checks, result.scores, strict=False):
                if score.skipped:
                    continue
                self._logger.emit(
                    timestamp=now,
                    context=context,
                    event_name=EVENT,
                    attributes={**common, **self._attributes(check, score)},
                )

    def _attributes(self, check: CompiledCheck, score: Any) -> dict[str, Any]:
        out: dict[str, Any] = {NAME: check.name, CHECK_TYPE: check.type}
        if score.error is not None:
            out[ERROR_TYPE] = score.error.code or "error"
        else:
            out[SCORE_VALUE] = float(score.value)
            out[SCORE_LABEL] = "pass" if score.passed else "fail"
        if self._explanations and score.reason:
            out[EXPLANATION] = score.reason[:EXPLANATION_MAX]
        if check.check_type.uses_judge:
            model = check.model or self._judge_model
            if model:
                out[JUDGE_MODEL] = model
            out[COST_USD] = float(score.cost_usd)
        elif score.cost_usd:
            out[COST_USD] = float(score.cost_usd)
        return out

    def close(self) -> None:
        """Emit what was handed off, export what is queued, stop the exporter (blocks)."""
        self._pending.put(None)
        self._thread.join()
        self._provider.shutdown()

    async def aclose(self) -> None:
        """`close` in a thread: the SDK's shutdown waits for its export thread."""
        await asyncio.to_thread(self.close)


def caller_context(trace_ctx: opb.TraceContext) -> Context:
    """A context whose current span is the caller's (W3C ids from the observation), so a
    record emitted in it carries the caller's trace id and span id; empty without a
    trace id. Observe refused ids that are not hex of the right length."""
    if not trace_ctx.trace_id:
        return Context()
    span = trace.NonRecordingSpan(
        trace.SpanContext(
            trace_id=int(trace_ctx.trace_id, 16),
            span_id=int(trace_ctx.span_id, 16) if trace_ctx.span_id else 0,
            is_remote=True,
            trace_flags=trace.TraceFlags(trace.TraceFlags.SAMPLED),
        )
    )
    return trace.set_span_in_context(span, Context())


def events_endpoint(traces_endpoint: str | None) -> str | None:
    """Where the events go: `OTEL_EXPORTER_OTLP_LOGS_ENDPOINT`, else the traces' endpoint;
    None (no events) when tracing is off or `OTEL_LOGS_EXPORTER=none`."""
    if traces_endpoint is None:
        return None
    if os.environ.get("OTEL_LOGS_EXPORTER", "").strip().lower() == "none":
        return None
    return os.environ.get(LOGS_ENDPOINT_VARIABLE, "").strip() or traces_endpoint


def start_evaluation_events(
    traces_endpoint: str | None, *, judge_model: str = "", dropped_counter: Any = None
) -> EvaluationEvents | None:
    """An SDK logger provider exporting over OTLP/gRPC in batches, and the emitter on it;
    None when events are off (see `events_endpoint`). Not installed: see `install`."""
    endpoint = events_endpoint(traces_endpoint)
    if endpoint is None:
        return None
    protocol = (
        os.environ.get("OTEL_EXPORTER_OTLP_LOGS_PROTOCOL")
        or os.environ.get("OTEL_EXPORTER_OTLP_PROTOCOL")
        or "grpc"
    ).strip()
    if protocol != "grpc":
        raise StartupError(
            f"OTEL_EXPORTER_OTLP_LOGS_PROTOCOL={protocol} is not supported: scorewire exports "
            "evaluation events over OTLP/gRPC only (unset it, or set it to grpc)"
        )
    from opentelemetry.exporter.otlp.proto.grpc._log_exporter import OTLPLogExporter
    from opentelemetry.sdk._logs import LoggerProvider
    from opentelemetry.sdk._logs.export import BatchLogRecordProcessor
    from opentelemetry.sdk.resources import SERVICE_NAME, Resource

    name = os.environ.get("OTEL_SERVICE_NAME", "").strip() or "scorewire"
    provider = LoggerProvider(resource=Resource.create({SERVICE_NAME: name}))
    provider.add_log_record_processor(BatchLogRecordProcessor(OTLPLogExporter(endpoint=endpoint)))
    explanations = os.environ.get(CAPTURE_CONTENT_VARIABLE, "").strip().lower() == "true"
    return EvaluationEvents(
        provider,
        judge_model=judge_model,
        explanations=explanations,
        dropped_counter=dropped_counter,
    )


_installed: EvaluationEvents | None = None


def install(events: EvaluationEvents | None) -> None:
    """Make `events` the process's emitter (None: no events)."""
    global _installed
    _installed = events


def installed() -> EvaluationEvents | None:
    """The process's emitter, or None."""
    return _installed


def emit(rule: Rule, scored: Sequence[tuple[opb.Observation, CaseResult]]) -> None:
    """Hand a rule's recorded scores to the installed emitter, if any (the consumer's hook;
    returns at once and never raises)."""
    events = _installed
    if events is not None:
        events.submit(rule, scored)
