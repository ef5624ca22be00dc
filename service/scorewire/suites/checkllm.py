"""Suites in the checkllm YAML format (seed `001_…`): prompts × providers × tests.

```yaml
description: "Customer support chatbot evaluation"
judge: {backend: openai, model: gpt-4o-mini}      # openai | anthropic | gemini | auto
prompts: ["You are a helpful agent. {{query}}"]
providers: [openai:gpt-4o, anthropic:claude-sonnet-4-6, echo]
tests:
  - description: "Return policy question"
    vars: {query: "How do I return an item?", context: "Items can be returned within 30 days."}
    assert:
      - {type: contains, value: "return"}
      - {type: relevance, threshold: 0.8}
    output: "You can return it within 30 days."    # scorewire: a recorded output
    outputs: {"openai:gpt-4o": "…", "echo": ["…one per prompt…"]}
settings: {budget: 2.0, threshold: 0.8, parallel: true, cache: true}
```

Every test is run for every prompt and every provider; the case's sample id is
`t<test>/p<prompt>/<provider>` (`t0/p1/openai:gpt-4o`), its input is the test's
`vars`, its expected value the var `expected`. A test's assertions are its own plan,
so the run is one `Group` per test (`scorewire.generation.jobs`).

scorewire's additions to the format, all optional:

- `tests[i].output`: a recorded output (a string) for every prompt × provider of the
  test, so no provider is called; `tests[i].outputs` maps a provider (as written in
  `providers`) to its recorded output, a string for every prompt or a list with one
  string per prompt; it wins over `output`. A file with no `providers:` scores only
  recorded outputs (the provider is then `recorded`) and every test needs `output`.
- `settings.concurrency` (default 16): combinations in flight when `parallel` is true
  (`parallel: false` runs one at a time).
- `gate:` the evalstone gate (`min_pass_rate`, `min_mean_score`, `max_error_rate`,
  `max_cost`); the default passes only when every assertion of every combination
  passed (`min_pass_rate: 1`) and none errored.

Choices where the format is silent: the LLM-as-judge types (`scorewire.checks.
judge_assertions`) get `settings.threshold` when they give no threshold, and every
check with a `model` parameter gets the `judge:` model when it names none. `judge:
{backend: gemini}` needs a `model` and is reached through the OpenAI-compatible judge
backend (the CLI points it at Gemini's endpoint). A `{{var}}` a prompt uses that a
generated test does not define is a load error at `tests[i].vars`. Unknown keys are
errors everywhere; every problem is reported at once, each with its path
(`tests[2].assert[0].value`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from scorewire.checks.judge_assertions import NAMES as JUDGE_ASSERTIONS
from scorewire.core.cost import current_meter
from scorewire.core.errors import FieldViolation, SpecError, join_path
from scorewire.core.model import Output, Sample
from scorewire.core.registry import REGISTRY, Registry
from scorewire.engine.cost import PROMPT_CHARS
from scorewire.engine.runner import Plan
from scorewire.engine.spec import CheckSpec, CompiledCheck
from scorewire.engine.summary import Gate, parse_gate
from scorewire.generation import templates
from scorewire.generation.jobs import Group, Job, ProviderCall, Recorded
from scorewire.generation.providers import ProviderRef, parse_provider
from scorewire.judge.models import parse_model
from scorewire.suites.checkllm_assertions import (
    checkllm_assertion_to_spec,
    compile_checkllm_assertion,
)
from scorewire.suites.yaml_document import parse_yaml

_TOP_KEYS = frozenset({"description", "judge", "prompts", "providers", "tests", "settings", "gate"})
_JUDGE_KEYS = frozenset({"backend", "model"})
_JUDGE_BACKENDS = ("openai", "anthropic", "gemini", "auto")
_TEST_KEYS = frozenset({"vars", "assert", "description", "output", "outputs"})
_SETTINGS_KEYS = frozenset({"budget", "threshold", "parallel", "cache", "concurrency"})

RECORDED = ProviderRef("recorded", "")
"""The provider of a file without `providers:`: outputs come from the file."""

DEFAULT_GATE = Gate(min_pass_rate=1.0)
"""Every combination must pass every assertion, and nothing may error."""


def is_checkllm(data: object) -> bool:
    """Whether a parsed YAML document is in the checkllm format (it has tests or prompts)."""
    return isinstance(data, Mapping) and ("tests" in data or "prompts" in data)


@dataclass(frozen=True, slots=True)
class JudgeConfig:
    """The `judge:` section."""

    backend: str = "auto"
    """openai, anthropic, gemini or auto."""
    model: str = ""
    """The model name; empty for the backend's default."""

    def model_param(self) -> str | None:
        """What judge checks get as their `model` parameter, or None for the default.

        Gemini is served by the OpenAI-compatible judge backend, so it maps to
        `openai:<model>`.
        """
        if self.backend == "auto":
            return self.model or None
        if self.backend == "gemini":
            return f"openai:{self.model}"
        return f"{self.backend}:{self.model}" if self.model else self.backend


@dataclass(slots=True)
class CheckllmSettings:
    """The `settings:` section."""

    budget: float = 10.0
    """Most USD the run may spend on provider and judge calls."""
    threshold: float = 0.8
    """Default threshold of the LLM-as-judge assertions."""
    parallel: bool = True
    """Whether combinations run concurrently."""
    cache: bool = True
    """Whether identical provider and judge calls are answered from a cache."""
    concurrency: int = 16
    """Combinations in flight when `parallel` is true."""

    @property
    def effective_concurrency(self) -> int:
        """`concurrency` when parallel, else 1."""
        return self.concurrency if self.parallel else 1


@dataclass(slots=True)
class CheckllmTest:
    """One test: its vars, its compiled assertions, and any recorded outputs."""

    index: int
    description: str
    vars: dict[str, Any]
    checks: list[CompiledCheck]
    specs: list[CheckSpec]
    output: str | None = None
    outputs: dict[str, str | list[str]] = field(default_factory=dict)

    def recorded(self, provider: str, prompt_index: int) -> str | None:
        """The recorded output for one prompt × provider, or None."""
        by_provider = self.outputs.get(provider)
        if isinstance(by_provider, str):
            return by_provider
        if isinstance(by_provider, list):
            return by_provider[prompt_index]
        return self.output


@dataclass(slots=True)
class CheckllmSuite:
    """A loaded checkllm file: everything validated, ready to expand into jobs."""

    description: str
    judge: JudgeConfig
    prompts: list[str]
    providers: list[ProviderRef]
    tests: list[CheckllmTest]
    settings: CheckllmSettings
    gate: Gate = DEFAULT_GATE
    check_timeout_s: float = 120.0

    @property
    def uses_judge(self) -> bool:
        """Whether any assertion may call a judge."""
        return any(c.uses_judge for t in self.tests for c in t.checks)

    def groups(self) -> list[Group]:
        """One group per test, its jobs in prompt-major, provider-minor order."""
        out: list[Group] = []
        index = 0
        for test in self.tests:
            jobs: list[Job] = []
            for j, template in enumerate(self.prompts):
                rendered = (
                    templates.render(template, test.vars)
                    if not templates.missing_vars(template, test.vars)
                    else None
                )
                for ref in self.providers:
                    pid = ref.id
                    sample = Sample(
                        f"t{test.index}/p{j}/{pid}",
                        dict(test.vars),
                        test.vars.get("expected"),
                        {
                            "test": test.index,
                            "description": test.description,
                            "prompt_index": j,
                            "provider": pid,
                        },
                    )
                    text = test.recorded(pid, j)
                    source: Recorded | ProviderCall
                    if text is not None:
                        source = Recorded(Output(text=text))
                    else:
                        # The loader has checked that the template renders here.
                        source = ProviderCall(pid, rendered or "")
                    jobs.append(Job(sample, source, pid, rendered, index))
                    index += 1
            out.append(
                Group(
                    f"t{test.index}",
                    Plan(list(test.checks), self.check_timeout_s),
                    jobs,
                    list(test.specs),
                    test.description,
                )
            )
        return out

    def called_providers(self) -> list[ProviderRef]:
        """Providers some combination must call (those without a recorded output)."""
        needed: dict[str, ProviderRef] = {}
        for group in self.groups():
            for job in group.jobs:
                if isinstance(job.source, ProviderCall):
                    ref = next(r for r in self.providers if r.id == job.provider)
                    needed.setdefault(ref.id, ref)
        return list(needed.values())


# ---- loading -------------------------------------------------------------------------------


def load_checkllm_file(path: str | Path, *, registry: Registry | None = None) -> CheckllmSuite:
    """Load a checkllm file from disk."""
    return load_checkllm_text(Path(path).read_text(encoding="utf-8"), registry=registry)


def load_checkllm_text(text: str, *, registry: Registry | None = None) -> CheckllmSuite:
    """Parse and load a checkllm document."""
    return load_checkllm_data(parse_yaml(text), registry=registry)


def load_checkllm_data(data: object, *, registry: Registry | None = None) -> CheckllmSuite:
    """Load an already-parsed checkllm document; SpecError with every problem found."""
    if not isinstance(data, Mapping):
        raise SpecError.at("", "a checkllm suite must be a mapping with `tests:`")
    violations: list[FieldViolation] = [
        FieldViolation(str(k), f"unknown key (allowed: {', '.join(sorted(_TOP_KEYS))})")
        for k in data
        if k not in _TOP_KEYS
    ]
    description = data.get("description", "")
    if not isinstance(description, str):
        violations.append(FieldViolation("description", "must be a string"))
        description = ""
    judge = _parse_judge(data.get("judge"), violations)
    settings = _parse_settings(data.get("settings"), violations)
    prompts = _parse_prompts(data, violations)
    providers = _parse_providers(data.get("providers"), violations)
    gate = _parse_gate(data.get("gate"), violations)
    tests = _parse_tests(data.get("tests"), judge, settings, providers, registry, violations)
    _check_combinations(data, prompts, providers, tests, violations)
    if violations:
        raise SpecError(violations)
    _charge_prompts(prompts, tests)
    return CheckllmSuite(
        description,
        judge,
        prompts or [""],
        providers or [RECORDED],
        tests,
        settings,
        gate,
    )


def _charge_prompts(prompts: list[str], tests: list[CheckllmTest]) -> None:
    """Charge the current meter what rendering every test's vars into every prompt
    writes (each run renders them all: `CheckllmSuite.groups`), before any is rendered."""
    meter = current_meter()
    if meter is None:
        return
    for test in tests:
        where = join_path(join_path("tests", test.index), "vars")
        for template in prompts:
            chars = templates.rendered_length(template, test.vars, meter.left(PROMPT_CHARS))
            meter.charge(PROMPT_CHARS, chars, where, "characters of rendered prompts")


def _parse_judge(raw: object, violations: list[FieldViolation]) -> JudgeConfig:
    if raw is None:
        return JudgeConfig()
    if not isinstance(raw, Mapping):
        violations.append(FieldViolation("judge", "must be a mapping {backend, model}"))
        return JudgeConfig()
    violations.extend(
        FieldViolation(join_path("judge", str(k)), "unknown key (allowed: backend, model)")
        for k in raw
        if k not in _JUDGE_KEYS
    )
    backend = raw.get("backend", "auto")
    model = raw.get("model", "")
    ok = True
    if backend not in _JUDGE_BACKENDS:
        violations.append(
            FieldViolation("judge.backend", f"must be one of {', '.join(_JUDGE_BACKENDS)}")
        )
        ok = False
    if model is None:
        model = ""
    if not isinstance(model, str):
        violations.append(FieldViolation("judge.model", "must be a string"))
        ok = False
    if not ok:
        return JudgeConfig()
    config = JudgeConfig(str(backend), model.strip())
    if config.backend == "gemini" and not config.model:
        violations.append(
            FieldViolation("judge.model", "the gemini judge needs a model (gemini-2.5-flash, ...)")
        )
        return JudgeConfig()
    try:
        parse_model(config.model_param())
    except ValueError as err:
        violations.append(FieldViolation("judge.model", str(err)))
        return JudgeConfig()
    return config


def _number(
    raw: Mapping[str, Any],
    key: str,
    violations: list[FieldViolation],
    *,
    low: float,
    high: float | None,
    what: str,
) -> float | None:
    value = raw.get(key)
    if value is None:
        return None
    if (
        isinstance(value, bool)
        or not isinstance(value, int | float)
        or not math.isfinite(value)  # YAML's .nan and .inf
        or value < low
        or (high is not None and value > high)
    ):
        violations.append(FieldViolation(join_path("settings", key), what))
        return None
    return float(value)


def _parse_settings(raw: object, violations: list[FieldViolation]) -> CheckllmSettings:
    s = CheckllmSettings()
    if raw is None:
        return s
    if not isinstance(raw, Mapping):
        violations.append(FieldViolation("settings", "must be a mapping"))
        return s
    violations.extend(
        FieldViolation(
            join_path("settings", str(k)),
            f"unknown key (allowed: {', '.join(sorted(_SETTINGS_KEYS))})",
        )
        for k in raw
        if k not in _SETTINGS_KEYS
    )
    budget = _number(raw, "budget", violations, low=0, high=None, what="must be dollars ≥ 0")
    if budget is not None:
        s.budget = budget
    threshold = _number(raw, "threshold", violations, low=0, high=1, what="must be in 0..1")
    if threshold is not None:
        s.threshold = threshold
    for key in ("parallel", "cache"):
        value = raw.get(key)
        if value is not None:
            if isinstance(value, bool):
                setattr(s, key, value)
            else:
                violations.append(
                    FieldViolation(join_path("settings", key), "must be true or false")
                )
    conc = raw.get("concurrency")
    if conc is not None:
        if isinstance(conc, bool) or not isinstance(conc, int) or not 1 <= conc <= 1024:
            violations.append(FieldViolation("settings.concurrency", "must be an integer 1..1024"))
        else:
            s.concurrency = conc
    return s


def _parse_prompts(data: Mapping[str, Any], violations: list[FieldViolation]) -> list[str]:
    raw = data.get("prompts")
    if raw is None:
        return []
    if not isinstance(raw, list) or not raw:
        violations.append(FieldViolation("prompts", "must be a non-empty list of templates"))
        return []
    out: list[str] = []
    for j, p in enumerate(raw):
        if not isinstance(p, str) or not p.strip():
            violations.append(FieldViolation(join_path("prompts", j), "must be a non-empty string"))
        else:
            out.append(p)
    return out if len(out) == len(raw) else []


def _parse_providers(raw: object, violations: list[FieldViolation]) -> list[ProviderRef]:
    if raw is None:
        return []
    if not isinstance(raw, list) or not raw:
        violations.append(FieldViolation("providers", "must be a non-empty list of backend:model"))
        return []
    out: list[ProviderRef] = []
    seen: set[str] = set()
    for i, p in enumerate(raw):
        where = join_path("providers", i)
        if not isinstance(p, str):
            violations.append(FieldViolation(where, "must be a string backend:model"))
            continue
        try:
            ref = parse_provider(p)
        except ValueError as err:
            violations.append(FieldViolation(where, str(err)))
            continue
        if ref.id in seen:
            violations.append(FieldViolation(where, f"{ref.id} is listed twice"))
            continue
        seen.add(ref.id)
        out.append(ref)
    return out if len(out) == len(raw) else []


def _parse_gate(raw: object, violations: list[FieldViolation]) -> Gate:
    if raw is None:
        return DEFAULT_GATE
    try:
        return parse_gate(raw, "gate")
    except SpecError as err:
        violations.extend(err.violations)
    return DEFAULT_GATE


def _parse_tests(
    raw: object,
    judge: JudgeConfig,
    settings: CheckllmSettings,
    providers: list[ProviderRef],
    registry: Registry | None,
    violations: list[FieldViolation],
) -> list[CheckllmTest]:
    if not isinstance(raw, list) or not raw:
        violations.append(FieldViolation("tests", "must be a non-empty list of tests"))
        return []
    tests = []
    for i, t in enumerate(raw):
        test = _parse_test(i, t, judge, settings, providers, registry, violations)
        if test is not None:
            tests.append(test)
    return tests


def _parse_test(
    i: int,
    raw: object,
    judge: JudgeConfig,
    settings: CheckllmSettings,
    providers: list[ProviderRef],
    registry: Registry | None,
    violations: list[FieldViolation],
) -> CheckllmTest | None:
    path = join_path("tests", i)
    if not isinstance(raw, Mapping):
        violations.append(FieldViolation(path, "a test must be a mapping {vars, assert}"))
        return None
    before = len(violations)
    violations.extend(
        FieldViolation(
            join_path(path, str(k)), f"unknown key (allowed: {', '.join(sorted(_TEST_KEYS))})"
        )
        for k in raw
        if k not in _TEST_KEYS
    )
    variables = raw.get("vars") or {}
    if not isinstance(variables, Mapping) or not all(isinstance(k, str) for k in variables):
        violations.append(FieldViolation(join_path(path, "vars"), "must be a mapping of names"))
        variables = {}
    description = raw.get("description", "")
    if not isinstance(description, str):
        violations.append(FieldViolation(join_path(path, "description"), "must be a string"))
        description = ""
    checks, specs = _compile_asserts(raw.get("assert"), path, judge, settings, registry, violations)
    output = raw.get("output")
    if output is not None and not isinstance(output, str):
        violations.append(FieldViolation(join_path(path, "output"), "must be a string"))
        output = None
    outputs = _parse_outputs(raw.get("outputs"), join_path(path, "outputs"), providers, violations)
    if len(violations) > before:
        return None
    return CheckllmTest(i, description, dict(variables), checks, specs, output, outputs)


def _with_defaults(
    assertion: Mapping[str, Any], judge: JudgeConfig, settings: CheckllmSettings, reg: Registry
) -> Mapping[str, Any]:
    """The assertion with the file's judge model and threshold filled in where absent."""
    kind = assertion.get("type")
    if not isinstance(kind, str):
        return assertion
    filled = dict(assertion)
    if kind in JUDGE_ASSERTIONS and "threshold" not in filled:
        filled["threshold"] = settings.threshold
    check_type = reg.get(kind)
    model = judge.model_param()
    if (
        model is not None
        and check_type is not None
        and "model" in check_type.params.model_fields
        and "model" not in filled
    ):
        filled["model"] = model
    return filled


def _compile_asserts(
    raw: object,
    path: str,
    judge: JudgeConfig,
    settings: CheckllmSettings,
    registry: Registry | None,
    violations: list[FieldViolation],
) -> tuple[list[CompiledCheck], list[CheckSpec]]:
    where = join_path(path, "assert")
    if raw is None:
        return [], []
    if not isinstance(raw, list):
        violations.append(FieldViolation(where, "must be a list of assertions"))
        return [], []
    reg = registry or REGISTRY
    checks: list[CompiledCheck] = []
    specs: list[CheckSpec] = []
    for k, assertion in enumerate(raw):
        apath = join_path(where, k)
        filled = (
            _with_defaults(assertion, judge, settings, reg)
            if isinstance(assertion, Mapping)
            else assertion
        )
        try:
            checks.append(compile_checkllm_assertion(filled, apath, registry=reg))
            specs.append(checkllm_assertion_to_spec(filled, apath))
        except SpecError as err:
            violations.extend(err.violations)
    return checks, specs


def _parse_outputs(
    raw: object, path: str, providers: list[ProviderRef], violations: list[FieldViolation]
) -> dict[str, str | list[str]]:
    if raw is None:
        return {}
    if not isinstance(raw, Mapping):
        violations.append(FieldViolation(path, "must map providers to recorded outputs"))
        return {}
    known = {p.id for p in providers}
    out: dict[str, str | list[str]] = {}
    for key, value in raw.items():
        where = join_path(path, str(key))
        try:
            ref_id = parse_provider(str(key)).id
        except ValueError:
            ref_id = str(key)
        if ref_id not in known:
            violations.append(
                FieldViolation(where, "not a provider of this file (list it in `providers:`)")
            )
        elif isinstance(value, str) or (
            isinstance(value, list) and all(isinstance(v, str) for v in value)
        ):
            out[ref_id] = value
        else:
            violations.append(
                FieldViolation(where, "must be a string, or a list of strings (one per prompt)")
            )
    return out


def _check_combinations(
    data: Mapping[str, Any],
    prompts: list[str],
    providers: list[ProviderRef],
    tests: list[CheckllmTest],
    violations: list[FieldViolation],
) -> None:
    """Every combination without a recorded output must be generable."""
    n_prompts = max(len(prompts), 1)
    for test in tests:
        path = join_path("tests", test.index)
        for pid, value in test.outputs.items():
            if isinstance(value, list) and len(value) != n_prompts:
                violations.append(
                    FieldViolation(
                        join_path(join_path(path, "outputs"), pid),
                        f"has {len(value)} outputs for {n_prompts} prompt(s)",
                    )
                )
        if not providers:
            if "providers" in data:
                continue  # the providers themselves are broken and reported
            if test.output is None:
                violations.append(
                    FieldViolation(
                        join_path(path, "output"),
                        "the file lists no providers, so every test needs a recorded `output`",
                    )
                )
            continue
        generated = [p for p in providers if test.recorded(p.id, 0) is None]
        if not generated:
            continue
        if not prompts:
            if "prompts" in data:
                continue  # the prompts themselves are broken and reported
            violations.append(
                FieldViolation(
                    "prompts",
                    f"test {test.index} has no recorded output for {generated[0].id}, so it "
                    "is generated from prompts: add `prompts:` (or `output:`)",
                )
            )
            return
        for j, template in enumerate(prompts):
            missing = templates.missing_vars(template, test.vars)
            if missing:
                violations.append(
                    FieldViolation(
                        join_path(path, "vars"),
                        f"prompts[{j}] uses {{{{{missing[0]}}}}}, which this test does not "
                        "define" + (f" (nor {', '.join(missing[1:])})" if missing[1:] else ""),
                    )
                )
