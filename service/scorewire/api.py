"""The in-process Python API: score an output, or run a suite file, with no server.

    from scorewire.api import score, run_suite_file

    scores = score("The capital is Paris.", [{"type": "contains", "needles": ["Paris"]}],
                   compact=["length:1..200"])
    results, summary = run_suite_file("evalstone.yaml", suite="smoke")

Checks are written as in a YAML suite (a mapping with `type:` and its parameters beside
it, plus `when:`, `examples:`, `extractor:`), or given as `CheckSpec`s; bad ones raise
`SpecError` with every problem and its path. Judge-backed checks need a `judge`
(`scorewire.judge.JudgeService.from_settings(Settings())`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import scorewire.checks  # noqa: F401 - registers the built-in check types
from scorewire.core.context import CheckContext
from scorewire.core.errors import FieldViolation, SpecError, join_path
from scorewire.core.model import Output, Sample, Score
from scorewire.engine.runner import Case, CaseResult, Plan, run_cases, score_case
from scorewire.engine.spec import CheckSpec, CompiledCheck, compile_check
from scorewire.engine.summary import Summary, SummaryBuilder
from scorewire.suites.evalstone import compile_compact, load_suite_file, parse_check_spec

__all__ = [
    "CheckLike",
    "arun_suite_file",
    "ascore",
    "compile_plan",
    "run_suite_file",
    "score",
]

CheckLike = CheckSpec | Mapping[str, Any]


def compile_plan(checks: Sequence[CheckLike] = (), compact: Sequence[str] = ()) -> Plan:
    """Validate and compile checks once; reuse the plan for many outputs."""
    compiled: list[CompiledCheck] = []
    violations: list[FieldViolation] = []
    for i, c in enumerate(checks):
        path = join_path("checks", i)
        try:
            spec = c if isinstance(c, CheckSpec) else parse_check_spec(c, path)
            compiled.append(compile_check(spec, path))
        except SpecError as err:
            violations.extend(err.violations)
    if compact:
        compiled.extend(compile_compact(list(compact), "compact", violations))
    if not compiled and not violations:
        violations.append(FieldViolation("checks", "no checks given"))
    if violations:
        raise SpecError(violations)
    return Plan(compiled)


def _sample(sample: Sample | Mapping[str, Any] | None) -> Sample:
    if sample is None or isinstance(sample, Sample):
        return sample or Sample()
    return Sample(
        str(sample.get("id", "")),
        sample.get("input"),
        sample.get("expected"),
        dict(sample.get("metadata") or {}),
    )


async def ascore(
    output: str | Output,
    checks: Sequence[CheckLike] | Plan = (),
    *,
    compact: Sequence[str] = (),
    sample: Sample | Mapping[str, Any] | None = None,
    judge: Any = None,
) -> list[Score]:
    """Score one output; one Score per check, structured checks first, then compact."""
    plan = checks if isinstance(checks, Plan) else compile_plan(checks, compact)
    out = output if isinstance(output, Output) else Output(output)
    result = await score_case(plan, Case(_sample(sample), out), CheckContext(judge=judge))
    return result.scores


def score(
    output: str | Output,
    checks: Sequence[CheckLike] | Plan = (),
    *,
    compact: Sequence[str] = (),
    sample: Sample | Mapping[str, Any] | None = None,
    judge: Any = None,
) -> list[Score]:
    """The synchronous `ascore` (not from inside a running event loop)."""
    return asyncio.run(ascore(output, checks, compact=compact, sample=sample, judge=judge))


async def arun_suite_file(
    path: str | Path, *, suite: str | None = None, judge: Any = None
) -> tuple[list[CaseResult], Summary]:
    """Run a suite file's recorded dataset: every case's result, then the gated summary."""
    loaded = load_suite_file(path).select(suite)
    if loaded.cases is None:
        raise SpecError.at(
            join_path(join_path("suites", loaded.name), "dataset"), "the suite has no dataset"
        )
    ctx = CheckContext(judge=judge, extras={"suite_dir": str(Path(path).parent)})
    builder = SummaryBuilder(loaded.plan.names, [c.type for c in loaded.plan.checks])
    results = []
    async for r in run_cases(
        loaded.plan, loaded.cases, ctx, concurrency=loaded.settings.concurrency
    ):
        builder.add(r)
        results.append(r)
    results.sort(key=lambda r: r.index)
    summary = builder.finish(loaded.gate)
    if loaded.gate.baseline is not None:
        # In process there is no run store to compare with: an unjudged gate is no pass.
        summary.gate_passed = False
        summary.gate_reasons.append(
            f"gate.baseline {loaded.gate.baseline!r} was not compared: baselines are judged "
            "by the server and by `scorewire run`, not in process"
        )
    return results, summary


def run_suite_file(
    path: str | Path, *, suite: str | None = None, judge: Any = None
) -> tuple[list[CaseResult], Summary]:
    """The synchronous `arun_suite_file`."""
    return asyncio.run(arun_suite_file(path, suite=suite, judge=judge))
