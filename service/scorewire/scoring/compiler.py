"""The one compiler: any request shape's `PlanSource` to a `CompiledPlan`.

Every entry point compiles through `compile_plan`: the scoring workers (every request's
plan, within the request limits), the serving process (the plans it scores itself), the
CLI (suite files) and the in-process API (checks given as data, suite files). What
differs between them is only the source's form:

- a request: YAML text (an evalstone suite or a checkllm document), serialized
  `CheckSpec`s, compact lines and a gate, with imports refused;
- checks given in process: `CheckSpec`s or YAML-style mappings, and compact lines;
- a suite file's parsed document, with its imports and datasets beside it.

With a meter (`request_meter(settings)`), every check's cost is charged before it
compiles and `LimitExceeded` names the first limit passed.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from scorewire.core.context import CheckContext
from scorewire.core.cost import RequestMeter, metering
from scorewire.core.errors import FieldViolation, SpecError, join_path
from scorewire.engine import native
from scorewire.engine.runner import Plan
from scorewire.engine.spec import CheckSpec, CompiledCheck, compile_check
from scorewire.engine.summary import Gate
from scorewire.metrics.runs import KNOWN_CODES
from scorewire.regex.engine import PROGRAM_SIZE_SETTING
from scorewire.scoring import wire
from scorewire.scoring.checkllm_results import kept_bytes
from scorewire.scoring.limits import output_problem
from scorewire.scoring.plan_source import PlanSource
from scorewire.scoring.plans import PLAN_BYTES_PER_REGEX_INSTRUCTION, CheckName, PlanInfo
from scorewire.settings import Settings
from scorewire.suites.checkllm import load_checkllm_data
from scorewire.suites.checkllm_request import (
    CHECKLLM,
    check_names,
    combinations,
    load_request_checkllm,
    request_format,
)
from scorewire.suites.checkllm_suite import CheckllmSuite
from scorewire.suites.evalstone import LoadedSuite, RunSettings, load_suite_data, load_suite_text
from scorewire.suites.evalstone_checks import compile_compact, parse_check_spec
from scorewire.suites.evalstone_request import load_request_suite
from scorewire.suites.preflight import judge_needs
from scorewire.suites.yaml_document import Parsed
from scorewire.v1 import scoring_pb2 as pb


@dataclass(slots=True)
class CompiledPlan:
    """A compiled source: its suite (or checkllm suite) and what the server learns of it."""

    info: PlanInfo
    suite: LoadedSuite | None = None
    """The evalstone suite, or the request's checks as one (None for checkllm)."""
    checkllm: CheckllmSuite | None = None
    """The checkllm document (each test is a plan of its own)."""
    compiled_bytes: int = 0
    """Memory its compiled regular expressions take, estimated (the plan cache's bound)."""
    description: str = ""
    """A suite file's description."""

    @property
    def plan(self) -> Plan:
        """The plan of an evalstone suite or a request's checks."""
        assert self.suite is not None, "a checkllm document has a plan per test"
        return self.suite.plan


def compile_plan(
    source: PlanSource,
    settings: Settings | None = None,
    *,
    meter: RequestMeter | None = None,
) -> CompiledPlan:
    """Compile `source`; SpecError with every problem and its path, or LimitExceeded.

    `settings` gives the per-check timeout and the output limits the inline dataset of a
    suite document is held to; None: the defaults.
    """
    settings = settings or Settings()
    timeout = settings.check_timeout_s
    started = time.thread_time()
    if source.document is not None:
        compiled = _compile_file(source, timeout)
    elif source.specs is not None:
        compiled = _compile_in_process(source)
    elif (read := _request_format(source, meter))[0] == CHECKLLM:
        suite = load_request_checkllm(
            source.suite_yaml,
            has_checks=bool(source.checks or source.compact),
            meter=meter,
            max_checks=source.max_checks,
            check_timeout_s=timeout,
            parsed=read[1],
        )
        compiled = CompiledPlan(_checkllm_info(suite), checkllm=suite)
    else:
        suite_ = load_request_suite(
            suite_yaml=source.suite_yaml,
            suite_name=source.suite_name,
            checks=wire.check_specs_from_pb([pb.CheckSpec.FromString(b) for b in source.checks]),
            compact=source.compact,
            gate=wire.gate_from_pb(pb.Gate.FromString(source.gate)) if source.gate else None,
            max_checks=source.max_checks,
            meter=meter,
            check_timeout_s=timeout,
            parsed=read[1],
        )
        paths = _request_paths(source, suite_.plan.checks)
        compiled = CompiledPlan(_suite_info(suite_, settings, paths), suite=suite_)
    compiled.info.compile_s = time.thread_time() - started
    if meter is not None:
        instructions = meter.used.get(PROGRAM_SIZE_SETTING, 0)
        compiled.compiled_bytes = instructions * PLAN_BYTES_PER_REGEX_INSTRUCTION
        if compiled.checkllm is not None:
            compiled.compiled_bytes += kept_bytes(compiled.checkllm)
    return compiled


def _request_format(source: PlanSource, meter: RequestMeter | None) -> tuple[str, Parsed | None]:
    """The document's format, read within the request's limits, and the document when
    its YAML was parsed to tell."""
    with metering(meter):
        return request_format(source.suite_yaml, source.format or None)


def _request_paths(source: PlanSource, checks: Iterable[CompiledCheck]) -> list[str]:
    """The field path of each of a request's checks, for the preflight's problems."""
    yaml = bool(source.suite_yaml.strip())
    return [f"suite_yaml.checks.{c.name}" if yaml else f"checks[{i}]" for i, c in enumerate(checks)]


def _suite_info(suite: LoadedSuite, settings: Settings, paths: list[str]) -> PlanInfo:
    plan = suite.plan
    problem = None
    for i, case in enumerate(suite.cases or ()):
        field = f"suite_yaml.cases[{i}].output"
        problem = output_problem(case.output.text, field, plan.whole_text_caps, settings)
        if problem is not None:
            break
    return PlanInfo(
        [CheckName(c.name, c.type) for c in plan.checks],
        plan.any_async,
        suite.gate,
        suite.settings,
        len(suite.cases or ()),
        plan.whole_text_caps,
        problem,
        judge_models=tuple(judge_needs(zip(paths, plan.checks, strict=True))),
    )


def _checkllm_info(suite: CheckllmSuite) -> PlanInfo:
    """What the server learns of a checkllm document: whether a test's checks wait on
    I/O as this process compiled them (a worker has stand-ins, async, for the server's
    own custom checks: `protocol.stand_ins`)."""
    return PlanInfo(
        [CheckName(n, "") for n in check_names(suite)],
        any(plan.any_async for plan in suite.plans()),
        suite.gate,
        RunSettings(fresh_judges=suite.settings.fresh_judges),
        combinations(suite),
        judge_models=tuple(
            judge_needs(
                (f"suite_yaml.tests[{t}].assert", c)
                for t, plan in enumerate(suite.plans())
                for c in plan.checks
            )
        ),
        format=CHECKLLM,
    )


def _compile_in_process(source: PlanSource) -> CompiledPlan:
    """Checks given in process: `CheckSpec`s or YAML-style mappings, and compact lines."""
    assert source.specs is not None
    compiled: list[CompiledCheck] = []
    violations: list[FieldViolation] = []
    for i, c in enumerate(source.specs):
        path = join_path("checks", i)
        try:
            spec = c if isinstance(c, CheckSpec) else parse_check_spec(c, path)
            compiled.append(compile_check(spec, path))
        except SpecError as err:
            violations.extend(err.violations)
    if source.compact:
        compiled.extend(compile_compact(list(source.compact), "compact", violations))
    if not compiled and not violations:
        violations.append(FieldViolation("checks", "no checks given"))
    if violations:
        raise SpecError(violations)
    suite = LoadedSuite("request", Plan(compiled), Gate(), RunSettings(), None)
    paths = [f"checks[{i}]" for i in range(len(compiled))]
    return CompiledPlan(_suite_info(suite, Settings(), paths), suite=suite)


def _compile_file(source: PlanSource, check_timeout_s: float) -> CompiledPlan:
    """A suite file's parsed document: checkllm, or the named evalstone suite."""
    from scorewire.suites.checkllm import is_checkllm

    if is_checkllm(source.document):
        suite = load_checkllm_data(source.document)
        suite.check_timeout_s = check_timeout_s  # the format has no timeout of its own
        return CompiledPlan(_checkllm_info(suite), checkllm=suite)
    base_dir = Path(source.base_dir) if source.base_dir is not None else None
    loaded = load_suite_data(source.document, base_dir=base_dir)
    selected = loaded.select(source.suite_name or None)
    selected.plan = Plan(list(selected.plan.checks), selected.settings.timeout_s(check_timeout_s))
    paths = [f"checks.{c.name}" for c in selected.plan.checks]
    info = _suite_info(selected, Settings(), paths)
    return CompiledPlan(info, suite=selected, description=loaded.description)


def suite_names(source: PlanSource | None, meter: RequestMeter | None = None) -> list[str]:
    """The suite names of a request's YAML document (ValidateSuite), [] when none; read
    within the request's limits."""
    if source is None or not source.suite_yaml.strip():
        return []
    try:
        with metering(meter):
            return sorted(load_suite_text(source.suite_yaml, allow_imports=False).suites)
    except SpecError:
        return []


def native_plan(plan: Plan, settings: Settings, ctx: CheckContext) -> Any | None:
    """The native kernel's plan of `plan` (None: the kernel is off, missing or of no use
    to it), built on first use and kept on the plan, so it goes when the plan does."""
    if not settings.native_kernel:
        return None
    if plan.native is None:
        built = native.build(
            plan,
            ctx,
            max_reason_chars=settings.max_reason_chars,
            spread_bytes=wire.score_bytes,
            known_codes=sorted(KNOWN_CODES),
        )
        plan.native = built if built is not None else False
    return plan.native or None
