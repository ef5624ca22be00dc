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

This module loads a document into a `SuiteFile` (its settings, checks, datasets and
suites with their targets) and turns a suite's cases into jobs. How a check is written
(inline or compact) is `evalstone_checks`'s, reading the text is `yaml_document`'s, and
the suite a request describes is `evalstone_request`'s.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from scorewire.core.errors import FieldViolation, SpecError, join_path
from scorewire.core.model import Output, Sample
from scorewire.core.registry import Registry
from scorewire.engine.custom import load_imports
from scorewire.engine.execute import DEFAULT_CHECK_TIMEOUT_S
from scorewire.engine.runner import Case, Plan
from scorewire.engine.spec import CompiledCheck, compile_check
from scorewire.engine.summary import Gate, parse_gate
from scorewire.generation import templates
from scorewire.generation.generator import GenerationJob, HttpCall, ProviderCall, Recorded
from scorewire.generation.targets import (
    HttpTarget,
    PromptTarget,
    RecordedTarget,
    Target,
    parse_target,
    sample_vars,
)
from scorewire.suites.evalstone_checks import compile_compact, parse_check_spec
from scorewire.suites.yaml_document import parse_yaml

_TOP_KEYS = frozenset({"imports", "checks", "datasets", "suites", "settings", "description"})
_SUITE_KEYS = frozenset({"dataset", "target", "checks", "compact", "gate", "description"})
_SETTINGS_KEYS = frozenset({"budget", "concurrency", "check_timeout_s", "fresh_judges"})


@dataclass(slots=True)
class RunSettings:
    """Run-wide settings of a suite file."""

    budget: float | None = None
    concurrency: int = 32
    check_timeout_s: float | None = None
    """Seconds each check may take; None leaves it to the runner's default
    (`SCOREWIRE_CHECK_TIMEOUT_S` in the server)."""
    fresh_judges: bool = False
    """Ask the judges again on every run: no verdict cached before the run began is read
    (a holdout watched for drift); a request's `judge_cache` overrides it."""

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
    fresh = m.get("fresh_judges")
    if fresh is not None:
        if isinstance(fresh, bool):
            s.fresh_judges = fresh
        else:
            violations.append(FieldViolation("settings.fresh_judges", "must be true or false"))
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


def suite_jobs(suite: LoadedSuite) -> list[GenerationJob]:
    """The jobs of an evalstone suite's cases under its target.

    A `prompt` target's template is rendered with each sample's variables
    (`targets.sample_vars`); a sample missing one is a SpecError naming it.
    """
    target = suite.target
    jobs: list[GenerationJob] = []
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
            jobs.append(GenerationJob(sample, ProviderCall(pid, prompt), pid, prompt, i))
        elif isinstance(target, HttpTarget):
            jobs.append(
                GenerationJob(sample, HttpCall(target, sample_vars(sample)), "http", None, i)
            )
        else:
            jobs.append(GenerationJob(sample, Recorded(case.output), "recorded", None, i))
    if violations:
        raise SpecError(violations)
    return jobs
