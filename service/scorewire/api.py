"""The in-process Python API: score an output, or run a suite file, with no server.

    from scorewire.api import score, run_suite_file

    scores = score("The capital is Paris.", [{"type": "contains", "needles": ["Paris"]}],
                   compact=["length:1..200"])
    results, summary = run_suite_file("evalstone.yaml", suite="smoke")
    results, summary = run_batch(cases, [{"type": "exact", "path": "answer"}])
    results, summary = run_suite_file("eval.yaml")      # a checkllm file, as the CLI runs it

Checks are written as in a YAML suite (a mapping with `type:` and its parameters beside
it, plus `when:`, `examples:`, `extractor:`), or given as `CheckSpec`s; bad ones raise
`SpecError` with every problem and its path. Judge-backed checks need a `judge`
(`scorewire.judge.JudgeService.from_settings(Settings())`).

`run_suite_file` recognises both suite formats as the CLI does: a file with `tests:` or
`prompts:` is a checkllm file, run for every test × prompt × provider (providers are
called with the credentials of `settings`, default `Settings()` from the environment;
recorded `output:`s call nobody), its results in combination order with sample ids
`t<test>/p<prompt>/<provider>`; anything else is an evalstone file.

`run_batch` scores many outputs held in memory, as the clients' `run_suite` takes them:
each case a mapping `{"sample": {...}, "output": ...}` (or a `(sample, output)` pair) of
plain Python values.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import scorewire.checks  # noqa: F401 - registers the built-in check types
from scorewire.core.context import CheckContext
from scorewire.core.errors import PreconditionError, SpecError, join_path
from scorewire.core.model import Output, Sample, Score
from scorewire.engine.runner import Case, CaseResult, Plan, run_cases, score_case
from scorewire.engine.spec import CheckSpec
from scorewire.engine.summary import Gate, Summary, SummaryBuilder
from scorewire.scoring import compiler
from scorewire.scoring.executor import Executor
from scorewire.scoring.plan_source import PlanSource
from scorewire.settings import Settings
from scorewire.suites.preflight import check_judges, judge_needs
from scorewire.suites.yaml_document import parse_yaml

__all__ = [
    "CaseLike",
    "CheckLike",
    "arun_batch",
    "arun_suite_file",
    "ascore",
    "compile_plan",
    "preflight_suite",
    "run_batch",
    "run_suite_file",
    "score",
]

CheckLike = CheckSpec | Mapping[str, Any]
CaseLike = Case | Mapping[str, Any] | tuple[Any, Any]
"""A case as the clients' `run_suite` takes it: `{"sample": ..., "output": ...}` or a
(sample, output) pair; a sample is a mapping with keys id, input, expected, metadata (or
a `Sample`), an output its text, a mapping with keys text, value, metadata (or an
`Output`)."""


_EXECUTOR: Executor | None = None


def _executor() -> Executor:
    """The in-process executor: it compiles and scores here (no worker processes)."""
    global _EXECUTOR
    if _EXECUTOR is None:
        _EXECUTOR = Executor(Settings(), workers=False)
    return _EXECUTOR


def compile_plan(checks: Sequence[CheckLike] = (), compact: Sequence[str] = ()) -> Plan:
    """Validate and compile checks once; reuse the plan for many outputs."""
    return compiler.compile_plan(PlanSource.of_checks(checks, compact)).plan


def _sample(sample: Sample | Mapping[str, Any] | None) -> Sample:
    if sample is None or isinstance(sample, Sample):
        return sample or Sample()
    return Sample(
        str(sample.get("id", "")),
        sample.get("input"),
        sample.get("expected"),
        dict(sample.get("metadata") or {}),
    )


_SAMPLE_KEYS = frozenset(("id", "input", "expected", "metadata"))
_OUTPUT_KEYS = frozenset(("text", "value", "metadata"))
_CASE_KEYS = frozenset(("sample", "output"))


def _unknown(where: str, obj: Mapping[str, Any], known: frozenset[str]) -> None:
    """ValueError naming the keys of `obj` outside `known` (none: nothing happens)."""
    if not obj.keys() <= known:
        extra = sorted(map(str, obj.keys() - known))
        raise ValueError(f"{where}: unknown key(s) {extra}")


def _batch_case(obj: CaseLike, index: int) -> Case:
    """One case of `run_batch` from what the clients take; ValueError naming the case."""
    # `type(...) is dict` first: plain dicts are what callers hold, and the Mapping ABC's
    # isinstance check costs more than the rest of the conversion.
    if type(obj) is dict or (not isinstance(obj, Case | tuple) and isinstance(obj, Mapping)):
        if len(obj) > 2 or not obj.keys() <= _CASE_KEYS:
            _unknown(f"cases[{index}]", obj, _CASE_KEYS)
        sample, output = obj.get("sample"), obj.get("output", "")
    elif isinstance(obj, Case):
        return Case(obj.sample, obj.output, index)
    elif isinstance(obj, tuple) and len(obj) == 2:
        sample, output = obj
    else:
        raise ValueError(f"cases[{index}]: a case is a mapping {{sample, output}} or a pair")
    if type(sample) is dict or (
        sample is not None and not isinstance(sample, Sample) and isinstance(sample, Mapping)
    ):
        if not sample.keys() <= _SAMPLE_KEYS:
            _unknown(f"cases[{index}].sample", sample, _SAMPLE_KEYS)
    elif sample is not None and not isinstance(sample, Sample):
        raise ValueError(f"cases[{index}].sample: a sample is a mapping or a Sample")
    s = _sample(sample)
    if type(output) is str:
        o = Output(output)
    elif isinstance(output, Output):
        o = output
    elif isinstance(output, Mapping):
        _unknown(f"cases[{index}].output", output, _OUTPUT_KEYS)
        text = output.get("text") or ""
        if not isinstance(text, str):
            raise ValueError(f"cases[{index}].output.text: the text is a string")
        meta = output.get("metadata")
        o = Output(text, output.get("value"), dict(meta) if meta else None)
    elif isinstance(output, str):
        o = Output(str(output))
    else:
        raise ValueError(f"cases[{index}].output: an output is its text, a mapping or an Output")
    return Case(s, o, index)


def _batch_cases(cases: Iterable[CaseLike]) -> Iterator[Case]:
    # Converted as the engine reaches them: a big batch is never held twice in memory.
    for i, c in enumerate(cases):
        yield _batch_case(c, i)


def _finish(builder: SummaryBuilder, gate: Gate | None) -> Summary:
    """The summary judged against `gate`; a baseline cannot be compared in process."""
    summary = builder.finish(gate)
    if gate is not None and gate.baseline is not None:
        # In process there is no run store to compare with: an unjudged gate is no pass.
        summary.gate_passed = False
        summary.gate_reasons.append(
            f"gate.baseline {gate.baseline!r} was not compared: baselines are judged "
            "by the server and by `scorewire run`, not in process"
        )
    return summary


def _batch_plan(checks: Sequence[CheckLike] | Plan, compact: Sequence[str], judge: Any) -> Plan:
    plan = checks if isinstance(checks, Plan) else compile_plan(checks, compact)
    preflight_suite(plan, judge, budgeted=False)
    return plan


async def arun_batch(
    cases: Iterable[CaseLike],
    checks: Sequence[CheckLike] | Plan = (),
    *,
    compact: Sequence[str] = (),
    judge: Any = None,
    gate: Gate | None = None,
    concurrency: int = 32,
) -> tuple[list[CaseResult], Summary]:
    """Score many cases in process: every case's result in input order, then the summary.

    Cases are what the clients' `run_suite` takes (`CaseLike`); a malformed one raises
    ValueError naming it (`cases[3].sample: ...`). The summary is judged against `gate`
    (the default gate when None; a `baseline` is judged by the server and by `scorewire
    run`, not here). Judge-backed checks run up to `concurrency` cases at once; a judge
    check that cannot be judged by `judge` raises `PreconditionError` before any call.
    """
    plan = _batch_plan(checks, compact, judge)
    return await _arun_plan(cases, plan, judge, gate, concurrency)


async def _arun_plan(
    cases: Iterable[CaseLike], plan: Plan, judge: Any, gate: Gate | None, concurrency: int
) -> tuple[list[CaseResult], Summary]:
    ctx = CheckContext(judge=judge)
    results = [r async for r in run_cases(plan, _batch_cases(cases), ctx, concurrency=concurrency)]
    results.sort(key=lambda r: r.index)  # they finish in any order
    return _summed(plan, results, gate)


def _summed(
    plan: Plan, results: list[CaseResult], gate: Gate | None
) -> tuple[list[CaseResult], Summary]:
    """The results and their summary, judged against `gate`."""
    builder = SummaryBuilder(plan.names, [c.type for c in plan.checks])
    for r in results:
        builder.add(r)
    return results, _finish(builder, gate)


def run_batch(
    cases: Iterable[CaseLike],
    checks: Sequence[CheckLike] | Plan = (),
    *,
    compact: Sequence[str] = (),
    judge: Any = None,
    gate: Gate | None = None,
    concurrency: int = 32,
) -> tuple[list[CaseResult], Summary]:
    """The synchronous `arun_batch` (not from inside a running event loop when a check
    needs one: deterministic checks run with no event loop at all)."""
    plan = _batch_plan(checks, compact, judge)
    if plan.any_async:
        return asyncio.run(_arun_plan(cases, plan, judge, gate, concurrency))
    results, builder = _executor().score_batch_here(
        plan, cases, _batch_case, CheckContext(judge=judge)
    )
    return results, _finish(builder, gate)


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
    path: str | Path,
    *,
    suite: str | None = None,
    judge: Any = None,
    settings: Settings | None = None,
) -> tuple[list[CaseResult], Summary]:
    """Run a suite file of either format: every case's result, then the gated summary.

    An evalstone file runs its suite's recorded dataset; a checkllm file every
    combination (see the module docstring). ValueError when a provider the file calls
    has no credentials in `settings`. Raises `PreconditionError` before any call when a
    judge check cannot be judged here (no judge, a backend without credentials, an unpriced
    model in a budgeted suite).
    """
    from scorewire.suites.checkllm import is_checkllm

    p = Path(path)
    data = parse_yaml(await asyncio.to_thread(p.read_text, encoding="utf-8"))
    if is_checkllm(data) and suite:
        raise SpecError.at("suite", "a checkllm file is one suite: name none")
    compiled = compiler.compile_plan(PlanSource.of_file(data, str(p.parent), suite or ""))
    if compiled.checkllm is not None:
        return await _run_checkllm(compiled.checkllm, p, judge, settings)
    loaded = compiled.suite
    assert loaded is not None
    if loaded.cases is None:
        raise SpecError.at(
            join_path(join_path("suites", loaded.name), "dataset"), "the suite has no dataset"
        )
    preflight_suite(loaded.plan, judge, budgeted=loaded.settings.budget is not None)
    ctx = CheckContext(judge=judge, extras={"suite_dir": str(Path(path).parent)})
    builder = SummaryBuilder(loaded.plan.names, [c.type for c in loaded.plan.checks])
    results = []
    async for r in run_cases(
        loaded.plan, loaded.cases, ctx, concurrency=loaded.settings.concurrency
    ):
        builder.add(r)
        results.append(r)
    results.sort(key=lambda r: r.index)
    return results, _finish(builder, loaded.gate)


def preflight_suite(plan: Plan, judge: Any, *, budgeted: bool) -> None:
    """Raise PreconditionError, before any call, when a judge check of `plan` cannot be
    judged by `judge` (None: no judge at all; a judge without `preflight` is trusted)."""
    needs = judge_needs((f"checks.{c.name}", c) for c in plan.checks)
    if not needs or (judge is not None and not hasattr(judge, "preflight")):
        return
    problems = check_judges(needs, judge, budgeted=budgeted)
    if problems:
        raise PreconditionError(problems)


async def _run_checkllm(
    loaded: Any, path: Path, judge: Any, settings: Settings | None
) -> tuple[list[CaseResult], Summary]:
    """Produce and score every combination of a checkllm suite, as the CLI does in process."""
    from scorewire.generation.generator import Generator, GroupedSummaryBuilder, run_groups
    from scorewire.generation.providers import ProviderCredentials, build_provider
    from scorewire.judge import Budget
    from scorewire.judge.pricing import PriceTable
    from scorewire.suites.checkllm_request import preflight

    settings = settings or Settings()
    groups = loaded.groups()
    called = loaded.called_providers()
    preflight(loaded, settings, generating=bool(called))
    for g in groups:
        preflight_suite(g.plan, judge, budgeted=loaded.settings.budget is not None)
    creds = ProviderCredentials.from_settings(settings)
    providers = {ref.id: build_provider(ref, creds) for ref in called}
    budget = Budget(loaded.settings.budget)  # the file's budget: providers and judges
    generator = Generator(
        providers,
        budget=budget,
        prices=PriceTable.from_settings(settings),
        cache=loaded.settings.cache,
    )
    ctx = CheckContext(judge=judge, budget=budget, extras={"suite_dir": str(path.parent)})
    builder = GroupedSummaryBuilder()
    for g in groups:
        builder.declare(g.plan.names, [c.type for c in g.plan.checks])
    results = []
    try:
        concurrency = loaded.settings.effective_concurrency
        async for jr in run_groups(groups, generator, ctx, concurrency=concurrency):
            builder.add_named(jr.result, jr.names, jr.types)
            results.append(jr.result)
    finally:
        await generator.aclose()
    results.sort(key=lambda r: r.index)
    return results, builder.finish(loaded.gate)


def run_suite_file(
    path: str | Path,
    *,
    suite: str | None = None,
    judge: Any = None,
    settings: Settings | None = None,
) -> tuple[list[CaseResult], Summary]:
    """The synchronous `arun_suite_file`."""
    return asyncio.run(arun_suite_file(path, suite=suite, judge=judge, settings=settings))
