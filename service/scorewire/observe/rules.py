"""Evaluation rules: which observations are scored, what share of them, by which checks.

A rules file (YAML or JSON, named by `SCOREWIRE_OBSERVE_RULES_FILE`) holds a list under
`rules:`; each rule is compiled once at load, so a rule naming an unknown check type, a
bad parameter or a sampling rate out of range is refused at start-up with the field's
path (`rules[1].checks[0].type`), never found later by the consumer.

    rules:
      - name: checkout-json
        checks:
          - {type: is_json}
        compact: ["length:1..2000"]
        filter: {route: /checkout, labels.env: prod}
        sampling_rate: 0.1
        settle_delay_s: 5
        cost_caps: {hour_usd: 1.0, day_usd: 10.0}
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from scorewire.core.errors import FieldViolation, SpecError, join_path
from scorewire.engine.runner import Plan
from scorewire.engine.spec import CheckSpec
from scorewire.scoring import compiler
from scorewire.scoring.plan_source import PlanSource
from scorewire.suites.evalstone_checks import parse_check_spec

MIN_RATE = 0.0001
"""The lowest sampling rate (0.01%): below it a rule would score almost nothing."""
MAX_SETTLE_DELAY_S = 60.0
"""The longest settle delay: a consumer holds an observation that long before scoring it,
well within the queue's lease (`observe_lease_s`, at least 90 s)."""
FILTER_KEYS = frozenset(("route", "model", "tenant"))
"""Metadata a filter may name besides `labels.<key>`."""
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:-]{0,63}$")
_RULE_KEYS = frozenset(
    ("name", "checks", "compact", "filter", "sampling_rate", "settle_delay_s", "cost_caps")
)
CAP_KEYS = ("hour_usd", "day_usd")
"""A rule's own cost caps: dollars its judge calls may spend per hour and per day."""
_TWO_64 = float(1 << 64)


def trace_fraction(trace_id: str) -> float:
    """Where a trace falls in [0, 1): the first 8 bytes of SHA-256(trace id), as a fraction.

    A trace is sampled at rate r when its fraction is below r, so a trace sampled at a
    lower rate is sampled at every higher one, and every rule picks the same traces."""
    digest = hashlib.sha256(trace_id.encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") / _TWO_64


@dataclass(frozen=True, slots=True)
class Rule:
    """One compiled evaluation rule."""

    name: str
    """Unique among rules; names the rule's rolling runs and its metrics series."""
    checks: tuple[CheckSpec, ...]
    """The structured checks as written (ListRules serves them)."""
    compact: tuple[str, ...]
    """The compact check lines as written."""
    filter: Mapping[str, str]
    """Equality on metadata: `route`, `model`, `tenant` or `labels.<key>`."""
    sampling_rate: float
    """The share of matching traces scored, MIN_RATE..1.0."""
    settle_delay_s: float
    """Seconds after an observation was produced before it is scored."""
    plan: Plan = field(repr=False, compare=False)
    """The compiled checks (structured first, then compact)."""
    cost_caps: Mapping[str, float] = field(default_factory=dict)
    """The rule's own caps by `CAP_KEYS` (USD); one not set falls back to the setting."""

    def matches(self, metadata: Mapping[str, str]) -> bool:
        """Whether every filter pair equals the observation's metadata (flattened: labels
        under `labels.<key>`)."""
        return all(metadata.get(k) == v for k, v in self.filter.items())

    def samples(self, trace_id: str) -> bool:
        """Whether the trace falls within this rule's sampling rate."""
        return self.sampling_rate >= 1.0 or trace_fraction(trace_id) < self.sampling_rate


def load_rules_file(path: Path) -> list[Rule]:
    """The rules of a YAML or JSON file; SpecError naming every bad field."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as err:
        raise SpecError.at("observe_rules_file", f"cannot read {path}: {err.strerror}") from None
    try:
        doc = json.loads(text) if path.suffix == ".json" else yaml.safe_load(text)
    except (ValueError, yaml.YAMLError) as err:
        raise SpecError.at("observe_rules_file", f"{path} does not parse: {err}") from None
    return parse_rules(doc)


def parse_rules(doc: Any) -> list[Rule]:
    """The rules of a parsed document (`{rules: [...]}`); SpecError naming every bad field."""
    if doc is None:
        return []
    if not isinstance(doc, Mapping) or set(doc) - {"rules"}:
        raise SpecError.at("rules", "the rules file is a mapping with one key, `rules:`")
    raw = doc.get("rules") or []
    if not isinstance(raw, list):
        raise SpecError.at("rules", "must be a list of rules")
    rules: list[Rule] = []
    violations: list[FieldViolation] = []
    seen: set[str] = set()
    for i, item in enumerate(raw):
        path = join_path("rules", i)
        try:
            rule = parse_rule(item, path)
        except SpecError as err:
            violations.extend(err.violations)
            continue
        if rule.name in seen:
            violations.append(FieldViolation(join_path(path, "name"), "names another rule's"))
        seen.add(rule.name)
        rules.append(rule)
    if violations:
        raise SpecError(violations)
    return rules


def parse_rule(raw: Any, path: str) -> Rule:
    """One rule, compiled; SpecError naming every bad field under `path`."""
    if not isinstance(raw, Mapping):
        raise SpecError.at(path, "a rule is a mapping with `name:` and `checks:`")
    bad: list[FieldViolation] = [
        FieldViolation(join_path(path, str(k)), f"unknown key; known: {sorted(_RULE_KEYS)}")
        for k in raw
        if k not in _RULE_KEYS
    ]
    name = raw.get("name")
    if not isinstance(name, str) or not _NAME.match(name):
        bad.append(FieldViolation(join_path(path, "name"), "1-64 of A-Za-z0-9._:- is needed"))
        name = ""
    filters = _filter(raw.get("filter"), join_path(path, "filter"), bad)
    rate = _number(raw.get("sampling_rate", 1.0), join_path(path, "sampling_rate"), bad)
    if rate is not None and not MIN_RATE <= rate <= 1.0:
        bad.append(FieldViolation(join_path(path, "sampling_rate"), "must be 0.0001 to 1.0"))
    delay = _number(raw.get("settle_delay_s", 0.0), join_path(path, "settle_delay_s"), bad)
    if delay is not None and not 0 <= delay <= MAX_SETTLE_DELAY_S:
        bad.append(FieldViolation(join_path(path, "settle_delay_s"), "must be 0 to 60"))
    caps = _caps(raw.get("cost_caps"), join_path(path, "cost_caps"), bad)
    specs, compact, plan = _checks(raw.get("checks"), raw.get("compact"), path, bad)
    if bad or plan is None:
        raise SpecError(bad)
    return Rule(name, specs, compact, filters, rate or 1.0, delay or 0.0, plan, caps)


def _caps(raw: Any, path: str, bad: list[FieldViolation]) -> dict[str, float]:
    if raw is None:
        return {}
    if not isinstance(raw, Mapping):
        bad.append(FieldViolation(path, "must be a mapping: hour_usd, day_usd"))
        return {}
    out = {}
    for k, v in raw.items():
        where = join_path(path, str(k))
        if k not in CAP_KEYS:
            bad.append(FieldViolation(where, f"unknown key; known: {list(CAP_KEYS)}"))
        elif isinstance(v, bool) or not isinstance(v, int | float) or not 0 <= v < math.inf:
            bad.append(FieldViolation(where, "must be a finite number of USD >= 0"))
        else:
            out[str(k)] = float(v)
    return out


def _filter(raw: Any, path: str, bad: list[FieldViolation]) -> dict[str, str]:
    if raw is None:
        return {}
    if not isinstance(raw, Mapping):
        bad.append(FieldViolation(path, "must be a mapping of metadata key to value"))
        return {}
    out = {}
    for k, v in raw.items():
        where = join_path(path, str(k))
        if not isinstance(k, str) or not (k in FILTER_KEYS or k.startswith("labels.")):
            bad.append(FieldViolation(where, "keys are route, model, tenant or labels.<key>"))
        elif not isinstance(v, str):
            bad.append(FieldViolation(where, "must be a string (equality)"))
        else:
            out[k] = v
    return out


def _number(raw: Any, path: str, bad: list[FieldViolation]) -> float | None:
    if isinstance(raw, bool) or not isinstance(raw, int | float):
        bad.append(FieldViolation(path, "must be a number"))
        return None
    return float(raw)


def _checks(
    checks: Any, compact: Any, path: str, bad: list[FieldViolation]
) -> tuple[tuple[CheckSpec, ...], tuple[str, ...], Plan | None]:
    """The rule's checks parsed and compiled once, their paths under the rule's."""
    if checks is not None and not isinstance(checks, list):
        bad.append(FieldViolation(join_path(path, "checks"), "must be a list of checks"))
        return (), (), None
    if compact is not None and not (
        isinstance(compact, list) and all(isinstance(c, str) for c in compact)
    ):
        bad.append(FieldViolation(join_path(path, "compact"), "must be a list of strings"))
        return (), (), None
    specs: list[CheckSpec] = []
    for i, raw in enumerate(checks or []):
        try:
            spec = raw if isinstance(raw, CheckSpec) else parse_check_spec(raw, f"checks[{i}]")
            specs.append(spec)
        except SpecError as err:
            bad.extend(_under(path, err.violations))
    if bad:
        return (), (), None
    lines = tuple(compact or ())
    try:
        plan = compiler.compile_plan(PlanSource.of_checks(specs, lines)).plan
    except SpecError as err:
        bad.extend(_under(path, err.violations))
        return (), (), None
    return tuple(specs), lines, plan


def _under(path: str, violations: Sequence[FieldViolation]) -> list[FieldViolation]:
    return [FieldViolation(f"{path}.{v.field}", v.description) for v in violations]
