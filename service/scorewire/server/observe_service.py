"""The ObserveService handlers: check a batch, queue it durably, list the rules.

A batch is checked whole before anything is queued (INVALID_ARGUMENT naming every bad
field), then queued in one write: whole or not at all (a full queue is
RESOURCE_EXHAUSTED naming `SCOREWIRE_OBSERVE_QUEUE_MAX`).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from typing import Any

import grpc
from google.protobuf import json_format
from scorewire.core.errors import FieldViolation, join_path
from scorewire.metrics.observe import ObserveMetrics
from scorewire.observe.queue import ObservationQueue, QueueFull, QueueUnavailable
from scorewire.observe.rules import Rule
from scorewire.server.convert import json_field_violations
from scorewire.server.registration import add_service
from scorewire.server.status import (
    RequestRejected,
    guarded_unary,
    invalid_argument,
    resource_exhausted,
)
from scorewire.settings import Settings
from scorewire.v1 import observe_pb2 as opb
from scorewire.v1 import observe_pb2_grpc as opb_grpc
from scorewire.v1 import scoring_pb2 as pb

Context = grpc.aio.ServicerContext[Any, Any]

MAX_BATCH = 1_000
"""Most observations one Observe request carries."""
MAX_ID_CHARS = 128
MAX_META_CHARS = 256
MAX_LABELS = 32
_TRACE_ID = re.compile(r"^[0-9a-f]{32}$")
_SPAN_ID = re.compile(r"^[0-9a-f]{16}$")


class ObserveService(opb_grpc.ObserveServiceServicer):
    """scorewire.v1.ObserveService on grpc.aio."""

    def __init__(
        self,
        settings: Settings,
        queue: ObservationQueue,
        rules: Sequence[Rule],
        metrics: ObserveMetrics | None = None,
    ) -> None:
        self._max_output = settings.max_output_bytes
        self._queue = queue
        self._rules = list(rules)
        self._metrics = metrics

    @guarded_unary
    async def Observe(self, request: opb.ObserveRequest, context: Context) -> opb.ObserveResponse:
        """Check the batch, then queue it whole; one ack per observation."""
        if not self._rules:
            # Acknowledged would promise a score no rule can give: the consumer would take
            # the observation and drop it.
            raise RequestRejected(
                grpc.StatusCode.FAILED_PRECONDITION,
                "no evaluation rules are loaded (SCOREWIRE_OBSERVE_RULES_FILE): "
                "nothing would score these observations",
            )
        items = self.checked(request)
        try:
            queued = await self._queue.put(items)
        except QueueFull as err:
            raise resource_exhausted("observations", str(err)) from None
        except QueueUnavailable as err:
            raise RequestRejected(grpc.StatusCode.UNAVAILABLE, str(err)) from None
        out = opb.ObserveResponse()
        for i, ((oid, _), ok) in enumerate(zip(items, queued, strict=True)):
            status = opb.OBSERVATION_STATUS_QUEUED if ok else opb.OBSERVATION_STATUS_DUPLICATE
            out.acks.add(index=i, observation_id=oid, status=status)
        if self._metrics is not None:
            n = sum(queued)
            self._metrics.queued.labels("queued").inc(n)
            self._metrics.queued.labels("duplicate").inc(len(queued) - n)
        return out

    def checked(self, request: opb.ObserveRequest) -> list[tuple[str, bytes]]:
        """(id, serialized observation) per observation, ids derived and receipt times set
        where missing; INVALID_ARGUMENT naming every bad field."""
        n = len(request.observations)
        if not 1 <= n <= MAX_BATCH:
            raise invalid_argument(
                [FieldViolation("observations", f"send 1 to {MAX_BATCH} observations, not {n}")]
            )
        violations: list[FieldViolation] = []
        items = []
        for i, obs in enumerate(request.observations):
            base = join_path("observations", i)
            violations.extend(self._violations(obs, base))
            if violations:
                continue
            if not obs.observation_id:
                obs.observation_id = derived_id(obs)
            if not obs.HasField("observed_at"):
                obs.observed_at.GetCurrentTime()
            items.append((obs.observation_id, obs.SerializeToString(deterministic=True)))
        if violations:
            raise invalid_argument(violations)
        return items

    def _violations(self, obs: opb.Observation, base: str) -> list[FieldViolation]:
        out = json_field_violations(obs.sample, obs.output, base)
        if len(obs.observation_id) > MAX_ID_CHARS:
            out.append(_at(base, "observation_id", f"longer than {MAX_ID_CHARS} characters"))
        if obs.trace.trace_id and not _TRACE_ID.match(obs.trace.trace_id):
            out.append(_at(base, "trace.trace_id", "must be 32 lowercase hex digits"))
        if obs.trace.span_id and not _SPAN_ID.match(obs.trace.span_id):
            out.append(_at(base, "trace.span_id", "must be 16 lowercase hex digits"))
        if len(obs.output.text.encode("utf-8", "surrogatepass")) > self._max_output:
            out.append(_at(base, "output.text", f"longer than {self._max_output} bytes"))
        meta = obs.metadata
        for name in ("route", "model", "tenant"):
            if len(getattr(meta, name)) > MAX_META_CHARS:
                out.append(_at(base, f"metadata.{name}", f"longer than {MAX_META_CHARS}"))
        if len(meta.labels) > MAX_LABELS:
            out.append(_at(base, "metadata.labels", f"more than {MAX_LABELS} labels"))
        for k, v in meta.labels.items():
            if not k or len(k) > MAX_META_CHARS or len(v) > MAX_META_CHARS:
                out.append(_at(base, f"metadata.labels.{k}", "keys 1-256, values 0-256 chars"))
        if obs.HasField("observed_at") and not 0 <= obs.observed_at.nanos < 1_000_000_000:
            out.append(_at(base, "observed_at", "is not a valid timestamp"))
        return out

    @guarded_unary
    async def ListRules(
        self, request: opb.ListRulesRequest, context: Context
    ) -> opb.ListRulesResponse:
        """The rules, in file order."""
        return opb.ListRulesResponse(rules=[rule_to_pb(r) for r in self._rules])


def _at(base: str, field: str, description: str) -> FieldViolation:
    return FieldViolation(f"{base}.{field}", description)


def derived_id(obs: opb.Observation) -> str:
    """An id for an observation sent without one: the same observation sent twice has the
    same id (trace, span, sample and output), so a retried batch is not queued twice."""
    h = hashlib.sha256()
    for part in (obs.trace.trace_id, obs.trace.span_id):
        h.update(part.encode())
        h.update(b"\x00")
    h.update(obs.sample.SerializeToString(deterministic=True))
    h.update(b"\x00")
    h.update(obs.output.SerializeToString(deterministic=True))
    return "o_" + h.hexdigest()[:32]


def rule_to_pb(rule: Rule) -> opb.Rule:
    """A rule as ListRules serves it (checks as CheckSpec messages)."""
    m = opb.Rule(
        name=rule.name,
        compact=list(rule.compact),
        filter=dict(rule.filter),
        sampling_rate=rule.sampling_rate,
        settle_delay_s=rule.settle_delay_s,
    )
    for spec in rule.checks:
        _spec_to_pb(spec, m.checks.add())
    return m


def _spec_to_pb(spec: Any, out: pb.CheckSpec) -> None:
    out.name = spec.name
    out.type = spec.type
    json_format.ParseDict(_plain(dict(spec.params)), out.params)
    if spec.when is not None:
        _spec_to_pb(spec.when, out.when)
    for e in spec.examples:
        kind = pb.EXAMPLE_KIND_POSITIVE if e.kind == "positive" else pb.EXAMPLE_KIND_NEGATIVE
        out.examples.add(text=e.text, kind=kind)
    if spec.extractor:
        out.extractor = spec.extractor


def _plain(value: Any) -> Any:
    """YAML values as JSON ones (tuples as lists)."""
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


def add_observe_service(
    server: Any,
    settings: Settings,
    queue: ObservationQueue,
    rules: Sequence[Rule],
    metrics: ObserveMetrics | None = None,
) -> str:
    """Register an ObserveService on `server`; returns its full name."""
    service = ObserveService(settings, queue, rules, metrics)
    return add_service(server, service, opb.DESCRIPTOR.services_by_name["ObserveService"])
