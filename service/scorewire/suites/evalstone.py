"""Suites in the shape of an `evalstone.yaml`: imports, keyed checks, datasets, suites.

```yaml
imports: [my_company.checks]          # server-side modules of custom checks
checks:
  short: {type: length, max_words: 80}
  cites: {type: contains, needles: [Addendum Y], when: {type: contains, needles: [Law X]}}
datasets:
  qa: {path: qa.jsonl}                # JSONL rows: id, input, expected, output, metadata
suites:
  smoke:
    dataset: qa
    target: recorded                  # outputs come with the samples
    checks: [short, cites]
    compact: ["length:1..2000"]       # one-line checks, named after their line
    gate: {min_pass_rate: 0.9, max_error_rate: 0}
settings: {budget: 5.0, concurrency: 32, check_timeout_s: 60}
```

Every problem is reported with the path of the offending field (`checks.short.max_wrds`),
all of them at once. Unknown keys are errors everywhere.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from scorewire.core.cost import LimitExceeded, RequestMeter, current_meter, metering
from scorewire.core.errors import FieldViolation, SpecError, join_path
from scorewire.core.model import Output, Sample
from scorewire.core.registry import REGISTRY, Registry
from scorewire.engine.cost import SUITE_BYTES, SUITE_NODES, SUITE_TEXT_BYTES, measure_specs
from scorewire.engine.custom import load_imports
from scorewire.engine.execute import DEFAULT_CHECK_TIMEOUT_S
from scorewire.engine.runner import Case, Plan
from scorewire.engine.spec import CheckSpec, CompiledCheck, Example, compile_check
from scorewire.engine.summary import Gate, parse_gate
from scorewire.generation import templates
from scorewire.generation.jobs import HttpCall, Job, ProviderCall, Recorded
from scorewire.generation.targets import (
    HttpTarget,
    PromptTarget,
    RecordedTarget,
    Target,
    parse_target,
    sample_vars,
)
from scorewire.settings import Settings
from scorewire.suites import bounded_yaml

MODIFIER_KEYS = frozenset({"type", "name", "when", "examples", "extractor"})
_TOP_KEYS = frozenset({"imports", "checks", "datasets", "suites", "settings", "description"})
_SUITE_KEYS = frozenset({"dataset", "target", "checks", "compact", "gate", "description"})
_SETTINGS_KEYS = frozenset({"budget", "concurrency", "check_timeout_s"})
MAX_YAML_BYTES: int = Settings.model_fields[SUITE_TEXT_BYTES].default
"""The largest suite document without a meter (the CLI): the server's default."""


@dataclass(slots=True)
class RunSettings:
    """Run-wide settings of a suite file."""

    budget: float | None = None
    concurrency: int = 32
    check_timeout_s: float | None = None
    """Seconds each check may take; None leaves it to the runner's default
    (`SCOREWIRE_CHECK_TIMEOUT_S` in the server)."""

    def timeout_s(self, default: float | None = None) -> float:
        """The per-check timeout: the suite's own, else `default`, else the engine's."""
        if self.check_timeout_s is not None:
            return self.check_timeout_s
        return default if default is not None else DEFAULT_CHECK_TIMEOUT_S


@dataclass(slots=True)
class LoadedSuite:
    """One runnable suite: its plan, gate, budget, and cases when a dataset was loaded."""

    name: str
    plan: Plan
    gate: Gate
    settings: RunSettings
    cases: list[Case] | None = None
    target: Target = field(default_factory=RecordedTarget)
    """Where outputs come from; a `prompt` or `http` target's cases are generated first."""


@dataclass(slots=True)
class SuiteFile:
    """A parsed and compiled suite document."""

    checks: dict[str, CompiledCheck]
    suites: dict[str, LoadedSuite]
    settings: RunSettings
    description: str = ""
    datasets: dict[str, list[Case]] = field(default_factory=dict)

    def select(self, name: str | None = None) -> LoadedSuite:
        """The suite called `name`; without a name, the only suite, or all checks."""
        if name:
            if name not in self.suites:
                known = ", ".join(sorted(self.suites)) or "none"
                raise SpecError.at("suite_name", f"no suite named {name!r} (suites: {known})")
            return self.suites[name]
        if len(self.suites) == 1:
            return next(iter(self.suites.values()))
        if self.suites:
            raise SpecError.at(
                "suite_name",
                f"the file has {len(self.suites)} suites; name one of "
                + ", ".join(sorted(self.suites)),
            )
        plan = Plan(list(self.checks.values()), self.settings.timeout_s())
        return LoadedSuite("default", plan, Gate(), self.settings)


def parse_check_spec(raw: object, path: str) -> CheckSpec:
    """A check written inline (`{type: contains, needles: [...], when: {...}}`)."""
    if not isinstance(raw, Mapping):
        raise SpecError.at(path, "a check must be a mapping with a `type:` key")
    violations: list[FieldViolation] = []
    ctype = raw.get("type")
    if not isinstance(ctype, str) or not ctype:
        violations.append(FieldViolation(join_path(path, "type"), "a check needs a `type:`"))
        ctype = ""
    when = None
    if raw.get("when") is not None:
        try:
            when = parse_check_spec(raw["when"], join_path(path, "when"))
        except SpecError as err:
            violations.extend(err.violations)
    examples: list[Example] = []
    try:
        examples = parse_examples(raw.get("examples"), join_path(path, "examples"))
    except SpecError as err:
        violations.extend(err.violations)
    extractor = raw.get("extractor")
    if extractor is not None and not isinstance(extractor, str):
        violations.append(FieldViolation(join_path(path, "extractor"), "must be a string"))
        extractor = None
    # A type with a parameter of a modifier's name (`trajectory.tool_called`'s `name`)
    # takes that key as its parameter; its display name then comes from the `checks:` key
    # or the nested form (`params: {name: ...}` beside a `name:`).
    modifiers = MODIFIER_KEYS - _param_names(ctype) if "params" not in raw else MODIFIER_KEYS
    name = raw.get("name", "") if "name" in modifiers else ""
    if not isinstance(name, str):
        violations.append(FieldViolation(join_path(path, "name"), "must be a string"))
        name = ""
    params = {k: v for k, v in raw.items() if k not in modifiers}
    params_path = ""
    if "params" in params and _nested_params(params, ctype):
        # The clients' canonical form: parameters under `params`, as in the proto.
        nested = params.pop("params")
        if params:
            violations.append(
                FieldViolation(
                    join_path(path, "params"),
                    "give parameters under `params` or beside `type`, not both "
                    f"(found {', '.join(sorted(params))} beside it)",
                )
            )
        elif nested is not None and not isinstance(nested, Mapping):
            violations.append(FieldViolation(join_path(path, "params"), "must be a mapping"))
        else:
            params, params_path = dict(nested or {}), "params"
    if violations:
        raise SpecError(violations)
    return CheckSpec(
        type=ctype,
        params=params,
        name=name,
        when=when,
        examples=examples,
        extractor=extractor,
        params_path=params_path,
    )


def _param_names(ctype: str) -> frozenset[str]:
    check = REGISTRY.get(ctype) if ctype else None
    return frozenset(check.params.model_fields) if check is not None else frozenset()


def _nested_params(params: Mapping[str, Any], ctype: str) -> bool:
    """Whether `params:` holds the parameters rather than being a parameter itself (no
    built-in type has one named so; a custom type that does keeps it)."""
    return "params" not in _param_names(ctype)


def parse_examples(raw: object, path: str) -> list[Example]:
    """`[{text: ..., kind: positive|negative}]`."""
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise SpecError.at(path, "must be a list of {text, kind} mappings")
    out: list[Example] = []
    violations = []
    for i, ex in enumerate(raw):
        where = join_path(path, i)
        if not isinstance(ex, Mapping) or set(ex) - {"text", "kind"}:
            violations.append(FieldViolation(where, "must be a mapping with `text` and `kind`"))
            continue
        text, kind = ex.get("text"), ex.get("kind", "positive")
        if not isinstance(text, str):
            violations.append(FieldViolation(join_path(where, "text"), "must be a string"))
        elif kind not in ("positive", "negative"):
            violations.append(
                FieldViolation(join_path(where, "kind"), "must be `positive` or `negative`")
            )
        else:
            out.append(Example(text, kind))
    if violations:
        raise SpecError(violations)
    return out


def _unknown_keys(
    raw: Mapping[str, Any], allowed: frozenset[str], path: str
) -> list[FieldViolation]:
    return [
        FieldViolation(
            join_path(path, str(k)), f"unknown key (allowed: {', '.join(sorted(allowed))})"
        )
        for k in raw
        if k not in allowed
    ]


def _as_mapping(raw: object, path: str, violations: list[FieldViolation]) -> Mapping[str, Any]:
    if raw is None:
        return {}
    if not isinstance(raw, Mapping):
        violations.append(FieldViolation(path, "must be a mapping"))
        return {}
    return raw


def parse_yaml(text: str) -> Any:
    """YAML text -> data; syntax errors become a SpecError with line and column.

    The document may be as large as, and its aliases may expand it only within, the
    current meter's limits (`max_suite_bytes`, `max_suite_expanded_bytes`,
    `max_suite_expanded_nodes`): past one, `LimitExceeded` names it, since the document
    is too big rather than wrong. Without a meter (the CLI, the in-process API) the
    settings' defaults bound it, as a SpecError.
    """
    meter = current_meter()
    limits = meter.limits if meter is not None else {}
    most = limits.get(SUITE_TEXT_BYTES, MAX_YAML_BYTES)
    if suite_over(text, most):
        if meter is None:
            raise SpecError.at("", suite_over_message(most))
        raise LimitExceeded(SUITE_TEXT_BYTES, "", suite_over_message(most))
    try:
        return bounded_yaml.load(
            text,
            max_nodes=limits.get(SUITE_NODES, bounded_yaml.MAX_EXPANDED_NODES),
            max_bytes=limits.get(SUITE_BYTES, bounded_yaml.MAX_EXPANDED_BYTES),
        )
    except bounded_yaml.ExpansionTooLarge as err:
        setting = SUITE_NODES if err.what == "nodes" else SUITE_BYTES
        message = f"{err.problem} ({setting}){_where(err)}"
        if meter is None:
            raise SpecError.at("", message) from None
        raise LimitExceeded(setting, "", message) from None
    except yaml.MarkedYAMLError as err:
        raise SpecError.at("", f"invalid YAML{_where(err)}: {err.problem}") from None
    except yaml.YAMLError as err:
        raise SpecError.at("", f"invalid YAML: {err}") from None
    except ValueError as err:
        # PyYAML's scanner lets a few bad escapes out as plain ValueErrors
        # (`"\U00110000"`: a code point beyond Unicode): still the caller's bad YAML.
        raise SpecError.at("", f"invalid YAML: {err}") from None


def suite_over(text: str, most: int) -> bool:
    """Whether `text` is over `most` bytes of UTF-8, encoded only when its length alone
    does not say (a character is 1 to 4 bytes)."""
    if len(text) > most:
        return True
    return len(text) * 4 > most and len(text.encode("utf-8", "surrogatepass")) > most


def suite_over_message(most: int) -> str:
    """Why a suite document over `max_suite_bytes` (`most`) is refused."""
    return f"the suite is larger than {SUITE_TEXT_BYTES} ({most:,} bytes)"


def _where(err: yaml.MarkedYAMLError) -> str:
    mark = err.problem_mark
    return f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""


def load_suite_text(
    text: str,
    *,
    base_dir: Path | None = None,
    registry: Registry | None = None,
    allow_imports: bool = True,
) -> SuiteFile:
    """Parse and compile a suite document; datasets are read relative to `base_dir`.

    `allow_imports=False` (the server) rejects `imports:`: modules there would run code
    named by the caller, so the server only takes modules from its own settings.
    """
    return load_suite_data(
        parse_yaml(text), base_dir=base_dir, registry=registry, allow_imports=allow_imports
    )


def load_suite_file(path: str | Path, *, registry: Registry | None = None) -> SuiteFile:
    """Load a suite file from disk, datasets relative to it."""
    p = Path(path)
    return load_suite_text(p.read_text(encoding="utf-8"), base_dir=p.parent, registry=registry)


def load_suite_data(
    data: object,
    *,
    base_dir: Path | None = None,
    registry: Registry | None = None,
    allow_imports: bool = True,
) -> SuiteFile:
    """Compile an already-parsed suite document."""
    if not isinstance(data, Mapping):
        raise SpecError.at("", "a suite must be a mapping with `checks:` (and `suites:`)")
    violations = _unknown_keys(data, _TOP_KEYS, "")
    _load_imports(data.get("imports"), allow_imports, violations)
    settings = _parse_settings(data.get("settings"), violations)
    checks = _compile_keyed_checks(data.get("checks"), registry, violations)
    datasets = _load_datasets(
        data.get("datasets"), base_dir, violations, _generated_datasets(data.get("suites"))
    )
    suites: dict[str, LoadedSuite] = {}
    for name, raw in _as_mapping(data.get("suites"), "suites", violations).items():
        suite = _parse_suite(str(name), raw, checks, datasets, settings, registry, violations)
        if suite is not None:
            suites[str(name)] = suite
    if violations:
        raise SpecError(violations)
    description = data.get("description", "")
    return SuiteFile(checks, suites, settings, str(description or ""), datasets)


def _load_imports(raw: object, allowed: bool, violations: list[FieldViolation]) -> None:
    if raw is None:
        return
    if not allowed:
        violations.append(
            FieldViolation(
                "imports",
                "the server does not import modules named in a request; "
                "list them in SCOREWIRE_IMPORTS on the server",
            )
        )
        return
    if not isinstance(raw, list) or not all(isinstance(m, str) for m in raw):
        violations.append(FieldViolation("imports", "must be a list of module names"))
        return
    try:
        load_imports(raw)
    except SpecError as err:
        violations.extend(err.violations)


def _parse_settings(raw: object, violations: list[FieldViolation]) -> RunSettings:
    m = _as_mapping(raw, "settings", violations)
    violations.extend(_unknown_keys(m, _SETTINGS_KEYS, "settings"))
    s = RunSettings()
    budget = m.get("budget")
    if budget is not None:
        if not _finite_number(budget) or budget < 0:
            violations.append(
                FieldViolation("settings.budget", "must be a finite number of dollars ≥ 0")
            )
        else:
            s.budget = float(budget)
    conc = m.get("concurrency")
    if conc is not None:
        if isinstance(conc, bool) or not isinstance(conc, int) or not 1 <= conc <= 1024:
            violations.append(FieldViolation("settings.concurrency", "must be an integer 1..1024"))
        else:
            s.concurrency = conc
    timeout = m.get("check_timeout_s")
    if timeout is not None:
        if not _finite_number(timeout) or timeout <= 0:
            violations.append(
                FieldViolation("settings.check_timeout_s", "must be a finite number of seconds > 0")
            )
        else:
            s.check_timeout_s = float(timeout)
    return s


def _finite_number(value: object) -> bool:
    """A real number (not a bool) that is neither NaN nor infinite: YAML has `.nan`, `.inf`."""
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _compile_keyed_checks(
    raw: object, registry: Registry | None, violations: list[FieldViolation]
) -> dict[str, CompiledCheck]:
    out: dict[str, CompiledCheck] = {}
    for key, spec_raw in _as_mapping(raw, "checks", violations).items():
        path = join_path("checks", str(key))
        try:
            spec = parse_check_spec(spec_raw, path)
            if not spec.name:
                spec.name = str(key)
            out[str(key)] = compile_check(spec, path, registry=registry)
        except SpecError as err:
            violations.extend(err.violations)
    return out


def _parse_suite(
    name: str,
    raw: object,
    checks: Mapping[str, CompiledCheck],
    datasets: Mapping[str, list[Case]],
    settings: RunSettings,
    registry: Registry | None,
    violations: list[FieldViolation],
) -> LoadedSuite | None:
    path = join_path("suites", name)
    m = _as_mapping(raw, path, violations)
    violations.extend(_unknown_keys(m, _SUITE_KEYS, path))
    before = len(violations)
    target: Target = RecordedTarget()
    try:
        target = parse_target(m.get("target", "recorded"), join_path(path, "target"))
    except SpecError as err:
        violations.extend(err.violations)
    compiled: list[CompiledCheck] = []
    keys = m.get("checks", list(checks)) if "checks" in m else list(checks)
    if not isinstance(keys, list):
        violations.append(FieldViolation(join_path(path, "checks"), "must be a list of check keys"))
        keys = []
    for i, key in enumerate(keys):
        if not isinstance(key, str) or key not in checks:
            # A key whose own definition failed has been reported already.
            violations.append(
                FieldViolation(join_path(join_path(path, "checks"), i), f"unknown check {key!r}")
            )
        else:
            compiled.append(checks[key])
    compiled.extend(compile_compact(m.get("compact"), join_path(path, "compact"), violations))
    gate = Gate()
    try:
        gate = parse_gate(m.get("gate"), join_path(path, "gate"))
    except SpecError as err:
        violations.extend(err.violations)
    cases = None
    ds = m.get("dataset")
    if ds is not None:
        if not isinstance(ds, str) or ds not in datasets:
            violations.append(FieldViolation(join_path(path, "dataset"), f"unknown dataset {ds!r}"))
        else:
            cases = datasets[ds]
    if len(violations) > before:
        return None
    plan = Plan(compiled, settings.timeout_s())
    return LoadedSuite(name, plan, gate, settings, cases, target)


def _generated_datasets(raw_suites: object) -> frozenset[str]:
    """Datasets used only by suites whose target generates outputs (rows need none)."""
    if not isinstance(raw_suites, Mapping):
        return frozenset()
    generated: set[str] = set()
    recorded: set[str] = set()
    for raw in raw_suites.values():
        if not isinstance(raw, Mapping) or not isinstance(raw.get("dataset"), str):
            continue
        target = raw.get("target", "recorded")
        kind = target.get("type") if isinstance(target, Mapping) else target
        (generated if kind in ("prompt", "http") else recorded).add(raw["dataset"])
    return frozenset(generated - recorded)


def compile_compact(
    raw: object, path: str, violations: list[FieldViolation]
) -> list[CompiledCheck]:
    """Compact checks (one-line strings or the JSON-array form); problems go to `violations`."""
    if raw is None:
        return []
    from scorewire.suites.compact import parse_compact_json, parse_compact_lines

    try:
        if isinstance(raw, str):
            return parse_compact_lines(raw.splitlines(), base=path)
        if isinstance(raw, list) and all(isinstance(x, str) for x in raw):
            return parse_compact_lines(raw, base=path)
        if isinstance(raw, list):
            return parse_compact_json(raw, base=path)
        violations.append(FieldViolation(path, "must be a list of one-line checks"))
    except SpecError as err:
        violations.extend(err.violations)
    return []


def _load_datasets(
    raw: object,
    base_dir: Path | None,
    violations: list[FieldViolation],
    generated: frozenset[str] = frozenset(),
) -> dict[str, list[Case]]:
    out: dict[str, list[Case]] = {}
    for name, ds in _as_mapping(raw, "datasets", violations).items():
        path = join_path("datasets", str(name))
        rows: Sequence[Any] | None = None
        if isinstance(ds, str) or (isinstance(ds, Mapping) and "path" in ds):
            file = ds if isinstance(ds, str) else ds["path"]
            if base_dir is None:
                violations.append(
                    FieldViolation(path, "datasets from files need a suite file on disk")
                )
                continue
            try:
                text = (base_dir / str(file)).read_text(encoding="utf-8")
            except OSError as err:
                violations.append(FieldViolation(path, f"cannot read {file}: {err.strerror}"))
                continue
            rows = []
            for lineno, line in enumerate(text.splitlines(), 1):
                if line.strip():
                    try:
                        rows.append(json.loads(line))
                    except json.JSONDecodeError as err:
                        violations.append(
                            FieldViolation(path, f"{file} line {lineno}: invalid JSON: {err.msg}")
                        )
        elif isinstance(ds, Mapping) and isinstance(ds.get("cases"), list):
            rows = ds["cases"]
        else:
            violations.append(FieldViolation(path, "must be a JSONL path or {cases: [...]}"))
            continue
        cases = []
        for i, row in enumerate(rows):
            try:
                cases.append(case_from_row(row, i, require_output=str(name) not in generated))
            except SpecError as err:
                violations.extend(
                    FieldViolation(
                        join_path(path, i) + (f".{v.field}" if v.field else ""), v.description
                    )
                    for v in err.violations
                )
        out[str(name)] = cases
    return out


_ROW_KEYS = frozenset({"id", "input", "expected", "output", "metadata"})


def case_from_row(row: object, index: int, *, require_output: bool = True) -> Case:
    """A dataset row `{id, input, expected, output, metadata}` -> Case.

    `output` is the recorded output: a string, or `{text, value, metadata}`. Rows of a
    dataset that only `prompt`/`http` targets use may omit it (`require_output=False`).
    """
    if not isinstance(row, Mapping):
        raise SpecError.at("", "a row must be a JSON object")
    violations = _unknown_keys(row, _ROW_KEYS, "")
    if "output" not in row and require_output:
        violations.append(FieldViolation("output", "a recorded target needs an `output`"))
    out = row.get("output")
    output = Output()
    if isinstance(out, str):
        output = Output(text=out)
    elif isinstance(out, Mapping):
        extra = set(out) - {"text", "value", "metadata"}
        if extra:
            violations.append(FieldViolation("output", f"unknown keys {sorted(extra)}"))
        text = out.get("text", "")
        if not isinstance(text, str):
            violations.append(FieldViolation("output.text", "must be a string"))
            text = ""
        if "text" not in out and out.get("value") is not None:
            text = json.dumps(out.get("value"), ensure_ascii=False)
        output = Output(text=text, value=out.get("value"), metadata=dict(out.get("metadata") or {}))
    elif out is not None:
        violations.append(FieldViolation("output", "must be a string or {text, value, metadata}"))
    if violations:
        raise SpecError(violations)
    sid = row.get("id", index)
    meta = row.get("metadata") or {}
    sample = Sample(str(sid), row.get("input"), row.get("expected"), dict(meta))
    return Case(sample, output, index)


def load_request_suite(
    *,
    suite_yaml: str = "",
    suite_name: str = "",
    checks: Sequence[CheckSpec] = (),
    compact: Sequence[str] = (),
    gate: Gate | None = None,
    registry: Registry | None = None,
    max_checks: int | None = None,
    meter: RequestMeter | None = None,
    check_timeout_s: float | None = None,
) -> LoadedSuite:
    """The suite a request describes: a YAML document, or structured and compact checks.

    Used by the server and the CLI alike; imports in a YAML document are refused, since
    a request must never name code for the server to run. With a `meter`, every check's
    cost is charged before it compiles and `LimitExceeded` names the first limit passed.
    `check_timeout_s` is the per-check timeout unless the suite's settings give one.
    """
    with metering(meter):
        data: object = None
        if suite_yaml.strip():
            try:
                data = parse_yaml(suite_yaml)
            except SpecError as err:
                raise SpecError(
                    [FieldViolation(_yaml_path(v.field), v.description) for v in err.violations]
                ) from None
            except LimitExceeded as err:
                raise LimitExceeded(err.setting, _yaml_path(err.field), err.message) from None
        if meter is not None:
            measure_specs(meter, _request_specs(data, checks, compact))
        return _load_request_suite(
            bool(suite_yaml.strip()),
            data,
            suite_name,
            checks,
            compact,
            gate,
            registry,
            max_checks,
            check_timeout_s,
        )


def _request_specs(
    data: object, checks: Sequence[CheckSpec], compact: Sequence[str]
) -> Iterator[tuple[CheckSpec, str]]:
    """Every check spec a request holds, with its path, parsed but not compiled.

    Specs that do not parse are skipped: compiling reports them with their problems.
    """
    from scorewire.suites.compact import compact_specs

    for i, spec in enumerate(checks):
        yield spec, join_path("checks", i)
    yield from compact_specs(list(compact), "compact")
    if not isinstance(data, Mapping):
        return
    keyed = data.get("checks")
    if isinstance(keyed, Mapping):
        for key, raw in keyed.items():
            path = join_path("checks", str(key))
            try:
                spec = parse_check_spec(raw, path)
            except SpecError:
                continue
            spec.name = spec.name or str(key)
            yield spec, _yaml_path(path)
    suites = data.get("suites")
    if isinstance(suites, Mapping):
        for name, raw in suites.items():
            if isinstance(raw, Mapping):
                path = join_path(join_path("suites", str(name)), "compact")
                yield from compact_specs(raw.get("compact"), _yaml_path(path))


def _load_request_suite(
    has_yaml: bool,
    data: object,
    suite_name: str,
    checks: Sequence[CheckSpec],
    compact: Sequence[str],
    gate: Gate | None,
    registry: Registry | None,
    max_checks: int | None,
    check_timeout_s: float | None,
) -> LoadedSuite:
    violations: list[FieldViolation] = []
    if has_yaml:
        if checks:
            violations.append(
                FieldViolation("checks", "give either suite_yaml or checks, not both")
            )
        try:
            loaded = load_suite_data(data, registry=registry, allow_imports=False)
            selected = loaded.select(suite_name or None)
        except SpecError as err:
            raise SpecError(
                [FieldViolation(_yaml_path(v.field), v.description) for v in err.violations]
                + violations
            ) from None
        except LimitExceeded as err:
            raise LimitExceeded(err.setting, _yaml_path(err.field), err.message) from None
        compiled = list(selected.plan.checks)
        gate = selected.gate
        settings = selected.settings
        cases = selected.cases
        name = selected.name
    else:
        compiled = []
        for i, spec in enumerate(checks):
            try:
                compiled.append(compile_check(spec, join_path("checks", i), registry=registry))
            except SpecError as err:
                violations.extend(err.violations)
        settings, cases, name = RunSettings(), None, suite_name or "request"
        gate = gate or Gate()
    blank = [i for i, line in enumerate(compact) if not line.strip()]
    # In a request every entry is a check with a result of its own: a blank one would
    # silently shift the results against the caller's list, so it is an error here.
    violations.extend(FieldViolation(join_path("compact", i), "empty compact check") for i in blank)
    if compact and not blank:
        compiled.extend(compile_compact(list(compact), "compact", violations))
    if not compiled and not violations:
        violations.append(FieldViolation("checks", "no checks: give suite_yaml, checks or compact"))
    if max_checks is not None and len(compiled) > max_checks:
        violations.append(
            FieldViolation("checks", f"{len(compiled)} checks exceed the limit of {max_checks}")
        )
    if violations:
        raise SpecError(violations)
    plan = Plan(compiled, settings.timeout_s(check_timeout_s))
    return LoadedSuite(name, plan, gate, settings, cases)


def _yaml_path(field: str) -> str:
    return f"suite_yaml.{field}" if field and field != "suite_name" else (field or "suite_yaml")


def suite_jobs(suite: LoadedSuite) -> list[Job]:
    """The jobs of an evalstone suite's cases under its target.

    A `prompt` target's template is rendered with each sample's variables
    (`targets.sample_vars`); a sample missing one is a SpecError naming it.
    """
    target = suite.target
    jobs: list[Job] = []
    violations: list[FieldViolation] = []
    for i, case in enumerate(suite.cases or ()):
        sample = case.sample
        if isinstance(target, PromptTarget):
            values = sample_vars(sample)
            missing = templates.missing_vars(target.template, values)
            if missing:
                violations.append(
                    FieldViolation(
                        join_path(join_path("suites", suite.name), "target.template"),
                        f"sample {sample.id!r} does not define {{{{{missing[0]}}}}}",
                    )
                )
                continue
            prompt = templates.render(target.template, values)
            pid = target.provider.id
            jobs.append(Job(sample, ProviderCall(pid, prompt), pid, prompt, i))
        elif isinstance(target, HttpTarget):
            jobs.append(Job(sample, HttpCall(target, sample_vars(sample)), "http", None, i))
        else:
            jobs.append(Job(sample, Recorded(case.output), "recorded", None, i))
    if violations:
        raise SpecError(violations)
    return jobs
