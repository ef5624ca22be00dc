"""The `tests:` of a checkllm document: each test's vars, its assertions compiled with the
file's judge model and threshold filled in, and its recorded outputs; and the check that
every combination without a recorded output can be generated from the prompts.
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from typing import Any

from scorewire.checks.judge_assertions import NAMES as JUDGE_ASSERTIONS
from scorewire.core.charges import NEEDLES
from scorewire.core.cost import current_meter
from scorewire.core.errors import FieldViolation, SpecError, join_path
from scorewire.core.registry import REGISTRY, Registry
from scorewire.engine.spec import CheckSpec, CompiledCheck
from scorewire.generation import templates
from scorewire.generation.providers import ProviderRef, parse_provider
from scorewire.suites.checkllm_assertions import (
    checkllm_assertion_to_spec,
    compile_checkllm_assertion,
)
from scorewire.suites.checkllm_suite import CheckllmSettings, CheckllmTest, JudgeConfig

_TEST_KEYS = frozenset({"vars", "assert", "description", "output", "outputs"})


def parse_tests(
    raw: object,
    judge: JudgeConfig,
    settings: CheckllmSettings,
    providers: list[ProviderRef],
    registry: Registry | None,
    violations: list[FieldViolation],
) -> list[CheckllmTest]:
    """The tests of the `tests:` section that load; the others' problems go to `violations`."""
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
    meter = current_meter()
    # A test's needles scan only its own cases' outputs: the request is held to the
    # most one test has (as a plain request's every check scans every case), not the sum.
    with meter.per_plan((NEEDLES,)) if meter is not None else contextlib.nullcontext():
        checks, specs = _compile_asserts(
            raw.get("assert"), path, judge, settings, registry, violations
        )
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


def check_combinations(
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
