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
so the run is one `Group` per test (`scorewire.generation.generator`).

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

The loaded suite is `checkllm_suite`'s `CheckllmSuite`; the sections around the tests are
read by `checkllm_sections`, the tests and their assertions by `checkllm_tests`.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from scorewire.core.cost import current_meter
from scorewire.core.errors import FieldViolation, SpecError, join_path
from scorewire.core.registry import Registry
from scorewire.engine.metering import PROMPT_CHARS
from scorewire.engine.summary import Gate, parse_gate
from scorewire.generation import templates
from scorewire.suites.checkllm_sections import (
    parse_judge,
    parse_prompts,
    parse_providers,
    parse_settings,
)
from scorewire.suites.checkllm_suite import DEFAULT_GATE, RECORDED, CheckllmSuite, CheckllmTest
from scorewire.suites.checkllm_tests import check_combinations, parse_tests
from scorewire.suites.yaml_document import parse_yaml

_TOP_KEYS = frozenset({"description", "judge", "prompts", "providers", "tests", "settings", "gate"})


def is_checkllm(data: object) -> bool:
    """Whether a parsed YAML document is in the checkllm format (it has tests or prompts)."""
    return isinstance(data, Mapping) and ("tests" in data or "prompts" in data)


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
    judge = parse_judge(data.get("judge"), violations)
    settings = parse_settings(data.get("settings"), violations)
    prompts = parse_prompts(data, violations)
    providers = parse_providers(data.get("providers"), violations)
    gate = _parse_gate(data.get("gate"), violations)
    tests = parse_tests(data.get("tests"), judge, settings, providers, registry, violations)
    check_combinations(data, prompts, providers, tests, violations)
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


def _parse_gate(raw: object, violations: list[FieldViolation]) -> Gate:
    if raw is None:
        return DEFAULT_GATE
    try:
        return parse_gate(raw, "gate")
    except SpecError as err:
        violations.extend(err.violations)
    return DEFAULT_GATE
