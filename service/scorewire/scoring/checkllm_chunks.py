"""A checkllm run of recorded outputs in the scoring workers: its cases checked and cut
into chunks in the serving process, each chunk scored in a worker.

The serving process reads each case once: it parses it, matches it to its combination
(`RecordedCombinations`: a case naming none, a second case for one, and then
combinations with no output are the call's INVALID_ARGUMENT, every one reported) and
holds its output to the output limits, before any of it is scored. Cases go to a worker
as the bytes the caller sent, with their combinations as three ints each
(`WorkerJob.combinations`); the combinations the document records follow the cases.

The worker builds each combination's sample as the serving process would
(`CheckllmSuite.sample`), scores each test's cases with that test's plan, and answers
the results written by `CheckllmResults` with the chunk's counts (`CheckllmCounts`), so
the serving process only adds up small objects and forwards bytes.
"""

from __future__ import annotations

from array import array
from collections.abc import Callable, Iterator, MutableSequence, Sequence
from typing import Any

from scorewire.core.context import CheckContext
from scorewire.core.cost import LimitExceeded
from scorewire.core.model import Output
from scorewire.engine.runner import Case, CaseResult, score_batch_sync
from scorewire.generation.generator import GroupedSummaryBuilder
from scorewire.metrics.runs import Tally, tally
from scorewire.scoring import wire
from scorewire.scoring.checkllm_results import CheckllmResults
from scorewire.scoring.chunks import BATCH_MAX_RESULTS, CHUNK_MAX_BYTES
from scorewire.scoring.limits import output_problem, short_output
from scorewire.scoring.plan_source import PlanSource
from scorewire.scoring.protocol import CheckllmCounts, Reply, WorkerJob, killed_score
from scorewire.settings import Settings
from scorewire.suites.checkllm_request import Combination, Matrix, RecordedCombinations
from scorewire.suites.checkllm_suite import CheckllmSuite
from scorewire.v1 import scoring_pb2 as pb

OUTPUT_LIMIT = "max_output_bytes"
"""The setting an output over the output limits is refused by (RESOURCE_EXHAUSTED)."""


class RecordedCases:
    """A checkllm run's recorded cases, checked one by one (`check`), then `finish`.

    Problems are gathered, not raised, so that every one is reported: the cases'
    violations, then the combinations with no output (INVALID_ARGUMENT); else the first
    output over the output limits in run order (RESOURCE_EXHAUSTED).
    """

    def __init__(
        self, suite: CheckllmSuite, settings: Settings, parse: Callable[[Any], pb.Case]
    ) -> None:
        """`parse` reads a case from its bytes (INVALID_ARGUMENT when they do not parse)."""
        self.combinations = RecordedCombinations(suite)
        self._settings = settings
        self._parse = parse
        self._caps = [plan.whole_text_caps for plan in suite.plans()]
        self._short = [short_output(settings, caps) for caps in self._caps]
        self._provider_at = {p.id: k for k, p in enumerate(suite.providers)}
        self._over: tuple[tuple[int, int, int], tuple[str, str]] | None = None

    @property
    def clean(self) -> bool:
        """Whether no case checked so far has a problem."""
        return self._over is None and not self.combinations.violations

    def position(self, combination: Combination) -> tuple[int, int, int]:
        """The combination as positions in the document: test, prompt, provider."""
        test, prompt, provider = combination
        return test, prompt, self._provider_at[provider]

    def check(self, data: Any, i: int) -> tuple[Combination, pb.Case] | None:
        """Case `i` from its bytes and its combination; None when it has a problem."""
        c = self._parse(data)
        combination = self.combinations.add(i, c.test, c.prompt, c.provider)
        if combination is None:
            return None
        output = c.output
        if output.value_json:  # a checkllm case's sample is not read: its output only
            bad = wire.json_field_violations(pb.Sample(), output, f"cases[{i}]")
            if bad:
                self.combinations.violations.extend(bad)
                return None
        text = output.text
        test = combination[0]
        if len(text) > self._short[test]:  # else far within every limit, without measuring
            field = f"cases[{i}].output"
            problem = output_problem(text, field, self._caps[test], self._settings)
            at = self.position(combination)
            if problem is not None and (self._over is None or at < self._over[0]):
                self._over = (at, problem)
        return combination, c

    def finish(self) -> list[Combination]:
        """The combinations the document records (they follow the cases), once every
        case is checked; raises the run's problem, if any."""
        own = self.combinations.finish()
        if self._over is not None:
            raise LimitExceeded(OUTPUT_LIMIT, *self._over[1])
        return own


def checkllm_job_maker(
    key: bytes, source: PlanSource, timeout_s: float, bounds_ms: tuple[float, ...] | None
) -> Callable[[list[bytes] | None, array[int], int], WorkerJob]:
    """Makes the `CHECKLLM` job of a chunk: its cases' bytes (None: the document records
    their outputs), their combinations, and the run index of the first."""

    def job(cases: list[bytes] | None, combinations: array[int], first: int) -> WorkerJob:
        return WorkerJob(
            key, source, Reply.CHECKLLM, timeout_s, cases=cases, first=first,
            count=len(combinations) // 3, bounds_ms=bounds_ms, combinations=combinations,
        )  # fmt: skip

    return job


def checkllm_jobs(
    cases: Sequence[Any],
    checker: RecordedCases,
    make: Callable[[list[bytes] | None, array[int], int], WorkerJob],
) -> Iterator[WorkerJob]:
    """The chunk jobs of a run: the request's cases, cut as a plain batch's are (at
    most `BATCH_MAX_RESULTS` cases or `CHUNK_MAX_BYTES`), each checked before its chunk
    goes; then the combinations the document records. After a problem no chunk goes,
    but every case is still checked, and the problems are raised after the last."""
    chunk: list[bytes] = []
    positions: array[int] = array("i")
    size = first = 0
    for i, data in enumerate(cases):
        checked = checker.check(data, i)
        if checked is None or not checker.clean:
            continue
        blob = bytes(data)
        chunk.append(blob)
        positions.extend(checker.position(checked[0]))
        size += len(blob)
        if len(chunk) >= BATCH_MAX_RESULTS or size >= CHUNK_MAX_BYTES:
            yield make(chunk, positions, first)
            chunk, positions, size, first = [], array("i"), 0, i + 1
    own = checker.finish()
    if chunk:
        yield make(chunk, positions, first)
    for at in range(0, len(own), BATCH_MAX_RESULTS):
        part = array("i")
        for combination in own[at : at + BATCH_MAX_RESULTS]:
            part.extend(checker.position(combination))
        yield make(None, part, len(cases) + at)


def score_chunk(
    suite: CheckllmSuite,
    job: WorkerJob,
    ctx: CheckContext,
    progress: MutableSequence[float],
    limit_s: float,
    settings: Settings,
) -> tuple[bytes, CheckllmCounts]:
    """Score a `CHECKLLM` job in a worker: its results, in the job's order, as a
    serialized `RunSuiteResponse`, and their counts. Each test's cases are scored with
    its plan, the watcher's positions (`progress`, `job.skip`) being the job's."""
    assert job.combinations is not None
    combinations: list[Combination] = []
    by_test: dict[int, tuple[list[int], list[Case]]] = {}
    at = job.combinations
    for k in range(job.count):
        test, prompt, provider = at[3 * k], at[3 * k + 1], suite.providers[at[3 * k + 2]].id
        if job.cases is not None:
            output = wire.output_from_pb(pb.Case.FromString(job.cases[k]).output)
        else:
            output = Output(text=suite.tests[test].recorded(provider, prompt) or "")
        combinations.append((test, prompt, provider))
        positions, cases = by_test.setdefault(test, ([], []))
        positions.append(k)
        cases.append(Case(suite.sample(test, prompt, provider), output, job.first + k))
    given = {
        pos: {j: killed_score(code, limit_s) for j, code in checks.items()}
        for pos, checks in job.skip.items()
    }
    results: dict[int, CaseResult] = {}
    summary, matrix = GroupedSummaryBuilder(), Matrix(None)
    tallies: list[tuple[int, Tally]] = []
    plans = suite.plans()
    for test, (positions, cases) in by_test.items():
        plan = plans[test]
        scored = score_batch_sync(
            plan, cases, ctx, progress=progress, deadline=job.deadline, given=given,
            positions=positions,
        )  # fmt: skip
        names, types = plan.names, [c.type for c in plan.checks]
        for pos, r in zip(positions, scored, strict=True):
            results[pos] = r
            summary.add_named(r, names, types)
            _, prompt, provider = combinations[pos]
            matrix.count(prompt, provider, r, 0.0)
        if job.bounds_ms is not None:
            tallies.append((test, tally(len(plan.checks), scored, job.bounds_ms)))
    writer = CheckllmResults(suite, settings.max_reason_chars, settings.generation_max_output_chars)
    message = writer.message(
        [writer.result(combinations[k], results[k], None) for k in range(job.count)]
    )
    return message, CheckllmCounts(summary, None, matrix, tallies)
