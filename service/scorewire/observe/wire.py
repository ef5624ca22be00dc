"""Observations and rules in their wire form: the checks of an Observe batch, the ids
derived for observations sent without one, rules as ListRules serves them.

The server's handlers call these (convert, call, convert back); the consumer reads the
same forms back from the queue.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from typing import Any

from google.protobuf import json_format
from scorewire.core.errors import FieldViolation, SpecError, join_path
from scorewire.observe.rules import CAP_KEYS, Rule, parse_rule
from scorewire.scoring.plan_source import PlanSource, plan_key
from scorewire.scoring.wire import check_specs_from_pb, json_field_violations
from scorewire.v1 import observe_pb2 as opb
from scorewire.v1 import scoring_pb2 as pb

MAX_BATCH = 1_000
"""Most observations one Observe request carries."""
MAX_ID_CHARS = 128
MAX_META_CHARS = 256
MAX_LABELS = 32
_TRACE_ID = re.compile(r"^[0-9a-f]{32}$")
_SPAN_ID = re.compile(r"^[0-9a-f]{16}$")


def checked_batch(request: opb.ObserveRequest, max_output: int) -> list[opb.Observation]:
    """The batch's observations, ids derived and receipt times set where missing;
    SpecError naming every bad field (nothing of a bad batch is queued)."""
    n = len(request.observations)
    if not 1 <= n <= MAX_BATCH:
        raise SpecError.at("observations", f"send 1 to {MAX_BATCH} observations, not {n}")
    violations: list[FieldViolation] = []
    for i, obs in enumerate(request.observations):
        violations.extend(_violations(obs, join_path("observations", i), max_output))
        if violations:
            continue
        if not obs.observation_id:
            obs.observation_id = derived_id(obs)
        if not obs.HasField("observed_at"):
            obs.observed_at.GetCurrentTime()
    if violations:
        raise SpecError(violations)
    return list(request.observations)


def _violations(obs: opb.Observation, base: str, max_output: int) -> list[FieldViolation]:
    out = json_field_violations(obs.sample, obs.output, base)
    if len(obs.observation_id) > MAX_ID_CHARS:
        out.append(_at(base, "observation_id", f"longer than {MAX_ID_CHARS} characters"))
    if obs.trace.trace_id and not _TRACE_ID.match(obs.trace.trace_id):
        out.append(_at(base, "trace.trace_id", "must be 32 lowercase hex digits"))
    if obs.trace.span_id and not _SPAN_ID.match(obs.trace.span_id):
        out.append(_at(base, "trace.span_id", "must be 16 lowercase hex digits"))
    if len(obs.output.text.encode("utf-8", "surrogatepass")) > max_output:
        out.append(_at(base, "output.text", f"longer than {max_output} bytes"))
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


def queue_id(obs: opb.Observation) -> str:
    """The id an observation is queued (and deduplicated) by: its own within its tenant,
    so one tenant's ids neither collide with nor reveal another's."""
    tenant = obs.metadata.tenant
    return f"{tenant}/{obs.observation_id}" if tenant else obs.observation_id


def flatten(meta: opb.ObservationMetadata) -> dict[str, str]:
    """The metadata as rules filter it: route, model, tenant and `labels.<key>`."""
    out = {"route": meta.route, "model": meta.model, "tenant": meta.tenant}
    out.update({f"labels.{k}": v for k, v in meta.labels.items()})
    return out


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
    if "hour_usd" in rule.cost_caps:
        m.cost_cap_hour_usd = rule.cost_caps["hour_usd"]
    if "day_usd" in rule.cost_caps:
        m.cost_cap_day_usd = rule.cost_caps["day_usd"]
    return m


def rule_from_pb(m: opb.Rule, path: str) -> Rule:
    """A rule sent over gRPC, compiled as a rules file's; SpecError naming every bad field
    under `path` (`rule.checks[0].type`)."""
    try:
        checks = check_specs_from_pb(m.checks)
    except SpecError as err:
        raise SpecError(
            [FieldViolation(f"{path}.{v.field}", v.description) for v in err.violations]
        ) from None
    raw: dict[str, Any] = {
        "name": m.name,
        "checks": checks,
        "compact": list(m.compact),
        "filter": dict(m.filter),
        "sampling_rate": m.sampling_rate,
        "settle_delay_s": m.settle_delay_s,
    }
    caps = {}
    if m.HasField("cost_cap_hour_usd"):
        caps["hour_usd"] = m.cost_cap_hour_usd
    if m.HasField("cost_cap_day_usd"):
        caps["day_usd"] = m.cost_cap_day_usd
    if caps:
        raw["cost_caps"] = caps
    try:
        return parse_rule(raw, path)
    except SpecError as err:
        raise SpecError(_renamed(err.violations, path)) from None


def _renamed(violations: Sequence[FieldViolation], path: str) -> list[FieldViolation]:
    """The message's names for the rules file's (`cost_caps.hour_usd`: `cost_cap_hour_usd`)."""
    out = []
    for v in violations:
        field = v.field
        for k in CAP_KEYS:
            field = field.replace(f"{path}.cost_caps.{k}", f"{path}.cost_cap_{k}")
        out.append(FieldViolation(field, v.description))
    return out


def rule_source(rule: Rule) -> tuple[bytes, PlanSource]:
    """The rule's checks as a request's plan source (what a scoring worker is sent, the
    same form a Score request's checks take), and the key its plan is kept by."""
    checks = tuple(c.SerializeToString(deterministic=True) for c in rule_to_pb(rule).checks)
    source = PlanSource(checks=checks, compact=tuple(rule.compact))
    return plan_key(source), source


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
