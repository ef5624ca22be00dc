"""A chunk of a checkllm run scored in a scoring worker (`Reply.CHECKLLM`).

Each test has its own plan, so a chunk is scored run by run: a run is consecutive cases
of one test (a run of a request written test by test is all of that test's
combinations). A run is one batch for the native kernel when it has twins of the
test's checks, else for the engine (`score_batch_sync`), as a plain chunk is; the
watcher's positions are the job's (`CASE_BASE` is the run's first). Each combination's
sample is `CheckllmSuite.sample`, as in the serving process; the kernel reads the
sample's id and expected value from a case written for it, and Python checks get the
sample itself. Results are written by `CheckllmResults` in the job's order, and the
chunk's counts (`CheckllmCounts`) go back with them.
"""

from __future__ import annotations

import ctypes
from typing import Any

from scorewire.core.context import CheckContext
from scorewire.core.model import Output
from scorewire.engine.runner import CASE_BASE, Case, Plan, score_batch_sync
from scorewire.engine.summary import SummaryBuilder
from scorewire.generation.generator import GroupedSummaryBuilder
from scorewire.metrics.runs import Tally, tally, tally_from_counts
from scorewire.scoring import wire
from scorewire.scoring.checkllm_chunks import sent_output
from scorewire.scoring.checkllm_results import CheckllmResults, CombinationBytes
from scorewire.scoring.compiler import native_plan
from scorewire.scoring.fields import result_bodies
from scorewire.scoring.protocol import CheckllmCounts, WorkerJob, killed_score
from scorewire.settings import Settings
from scorewire.suites.checkllm_request import Matrix
from scorewire.suites.checkllm_suite import CheckllmSuite
from scorewire.v1 import scoring_pb2 as pb


class _ChunkScorer:
    """Scores one `CHECKLLM` job (`score()`), in a worker whose watcher reads `progress`."""

    def __init__(
        self,
        suite: CheckllmSuite,
        job: WorkerJob,
        ctx: CheckContext,
        progress: Any,
        limit_s: float,
        settings: Settings,
    ) -> None:
        """`progress`: the worker's progress slots (a ctypes array: the kernel writes
        them by address); `limit_s`: the time a check may run."""
        assert job.combinations is not None
        self._suite, self._job, self._ctx = suite, job, ctx
        self._progress, self._limit_s, self._settings = progress, limit_s, settings
        self._bytes = CombinationBytes.of(suite)
        self._providers = self._bytes.providers
        self._per_test = len(suite.prompts) * len(suite.providers)
        prompts = range(len(suite.prompts))
        self._cells = [(p, provider) for p in prompts for provider in self._providers]
        """Each prompt × provider cell (prompt, provider id), by `number % _per_test`."""
        self._combinations: list[int] = job.combinations
        self._writer = CheckllmResults(
            suite, settings.max_reason_chars, settings.generation_max_output_chars
        )
        self._summary, self._matrix = GroupedSummaryBuilder(), Matrix(None)
        self._tallies: list[tuple[int, Tally]] = []
        self._written: list[bytes] = []

    def score(self) -> tuple[bytes, CheckllmCounts]:
        """The chunk's results as a serialized `RunSuiteResponse`, and their counts."""
        plans, per_test = self._suite.plans(), self._per_test
        combinations, n = self._combinations, len(self._combinations)
        start = 0
        try:
            while start < n:
                test = combinations[start] // per_test
                end = start + 1
                while end < n and combinations[end] // per_test == test:
                    end += 1
                self._progress[CASE_BASE] = start
                self._run(plans[test], test, start, end)
                start = end
        finally:
            self._progress[CASE_BASE] = 0.0
        counts = CheckllmCounts(self._summary, None, self._matrix.counts(), self._tallies)
        return self._writer.message(self._written), counts

    def _output(self, k: int) -> Output:
        """Case `k`'s output: as sent, or the one the document records."""
        outputs = self._job.outputs
        if outputs is not None:
            return sent_output(outputs[k])
        test, prompt, at = self._suite.combination(self._combinations[k])
        return Output(self._suite.tests[test].recorded(self._providers[at], prompt) or "")

    def _case(self, k: int) -> Case:
        """Case `k` as the engine's Case (its run index is `first + k`)."""
        test, prompt, at = self._suite.combination(self._combinations[k])
        sample = self._suite.sample(test, prompt, self._providers[at])
        return Case(sample, self._output(k), self._job.first + k)

    def _kernel_case(self, data: bytes, index: int) -> Case:
        """The Case of run index `index` a Python check reads (the kernel asks)."""
        return self._case(index - self._job.first)

    def _skipped(self, start: int, end: int) -> dict[int, dict[int, str]]:
        """The checks not to run again of cases `start..end`, by position in the run."""
        return {pos - start: checks for pos, checks in self._job.skip.items() if start <= pos < end}

    def _run(self, plan: Plan, test: int, start: int, end: int) -> None:
        """Score cases `start..end`, all of `test`, and count them."""
        kernel = native_plan(plan, self._settings, self._ctx)
        if kernel is not None and self._bytes.expected_json(test) is not None:
            self._run_native(kernel, plan, test, start, end)
            return
        given = {
            pos: {j: killed_score(code, self._limit_s) for j, code in checks.items()}
            for pos, checks in self._skipped(start, end).items()
        }
        cases = [self._case(k) for k in range(start, end)]
        results = score_batch_sync(
            plan, cases, self._ctx, progress=self._progress, deadline=self._job.deadline,
            given=given,
        )  # fmt: skip
        summary = SummaryBuilder(plan.names, [c.type for c in plan.checks])
        matrix, writer = self._matrix, self._writer
        cells, per_test = self._cells, self._per_test
        for k, r in enumerate(results, start):
            summary.add(r)
            number = self._combinations[k]
            errored = any(s.error is not None for s in r.scores)
            matrix.count(*cells[number % per_test], r.passed, errored, 0.0)
            self._written.append(writer.result(number, r, None))
        self._summary.merge(summary)
        bounds = self._job.bounds_ms
        if bounds is not None:
            self._tallies.append((test, tally(len(plan.checks), results, bounds)))

    def _run_native(self, kernel: Any, plan: Plan, test: int, start: int, end: int) -> None:
        """`_run` in the native kernel: it reads each case's text and the sample's id and
        expected value from bytes; a Python check gets `_case`."""
        job, combinations = self._job, self._combinations
        outputs, sample_field, case = job.outputs, self._bytes.sample_field, wire.sample_case
        data = [
            case(
                sample_field(combinations[k]),
                outputs[k] if outputs is not None else self._output(k).text,
            )
            for k in range(start, end)
        ]
        limit_s = self._limit_s
        message, counts, tallied = kernel.score_wire(
            data, job.first + start, self._kernel_case, ctypes.addressof(self._progress),
            job.deadline,
            self._skipped(start, end), lambda code: killed_score(code, limit_s),
            list(job.bounds_ms) if job.bounds_ms is not None else None,
        )  # fmt: skip
        summary = SummaryBuilder(plan.names, [c.type for c in plan.checks])
        summary.add_counts(counts)
        self._summary.merge(summary)
        if tallied is not None:
            self._tallies.append((test, tally_from_counts(tallied)))
        count, scored, written = self._matrix.count, self._writer.scored, self._written
        cells, per_test, outcomes = self._cells, self._per_test, _outcomes(message, counts)
        for number, body, (passed, errored) in zip(
            combinations[start:end], result_bodies(message), outcomes, strict=True
        ):
            count(*cells[number % per_test], passed, errored, 0.0)
            written.append(scored(number, body))


def _outcomes(message: bytes, counts: Any) -> list[tuple[bool, bool]]:
    """Whether each case of a batch the kernel scored passed, and whether a score of it
    is an error: from its counts when every case passed (no error then), else read
    back from its message."""
    cases, passed, _ = counts
    if passed == cases:
        return [(True, False)] * cases
    results = pb.RunSuiteResponse.FromString(message).results.results
    return [(r.passed, any(s.HasField("error") for s in r.scores)) for r in results]


def score_chunk(
    suite: CheckllmSuite,
    job: WorkerJob,
    ctx: CheckContext,
    progress: Any,
    limit_s: float,
    settings: Settings,
) -> tuple[bytes, CheckllmCounts]:
    """Score a `CHECKLLM` job: its results as a serialized `RunSuiteResponse` in the
    job's order, and their counts."""
    return _ChunkScorer(suite, job, ctx, progress, limit_s, settings).score()
