"""A checkllm run's results and summary on the wire: one conversion for both its paths.

A combination is scored in the serving process (its output generated, or a check that
waits on I/O) or in a scoring worker (recorded outputs, synchronous checks:
`scoring.executor`). Either way its result is written here, as the bytes of a
`CaseResult` with its combination, and the run ends with the summary written here, so
the two paths answer the same bytes.
"""

from __future__ import annotations

from typing import Any

from scorewire.engine.runner import CaseResult, NamedCheck
from scorewire.generation.generator import GenerationStats, GroupedSummaryBuilder, Produced
from scorewire.scoring import wire
from scorewire.suites.checkllm_request import Combination, Matrix
from scorewire.suites.checkllm_suite import CheckllmSuite
from scorewire.v1 import scoring_pb2 as pb


class CheckllmResults:
    """Writes the results of one run of a checkllm suite (`message(results)`)."""

    def __init__(self, suite: CheckllmSuite, max_reason_chars: int, max_output_chars: int) -> None:
        """`max_output_chars`: where a generated output sent back is cut."""
        self._suite = suite
        self._writer = wire.ResultWriter(max_reason_chars)
        self._heads: list[list[tuple[bytes, NamedCheck]] | None] = [None] * len(suite.tests)
        self._max_output_chars = max_output_chars
        self._combinations = wire.CombinationFields()
        self._providers = [p.id for p in suite.providers]

    def result(
        self, combination: Combination, result: CaseResult, produced: Produced | None
    ) -> bytes:
        """One combination's `CaseResultBatch.results` field: its scores, which
        combination it is, and (`produced`: its output was generated; None: recorded)
        what producing its output cost and the output, cut."""
        test = combination[0]
        heads = self._heads[test]
        if heads is None:
            heads = self._heads[test] = self._writer.heads(self._suite.plans()[test].checks)
        return wire.result_field(
            self._writer.result(heads, result) + self._tail(combination, produced)
        )

    def scored(self, combination: Combination, fields: bytes) -> bytes:
        """`result` of a recorded combination whose `CaseResult` fields (index, sample id,
        scores, passed) the native kernel wrote: the same bytes (`tests/engine/
        test_native.py` holds the kernel's fields to `wire.ResultWriter`'s)."""
        test, prompt, at = combination
        tail = self._combinations.fields(
            test, self._suite.tests[test].description, prompt, self._providers[at]
        )
        return wire.result_field(fields + tail)

    def _tail(self, combination: Combination, produced: Produced | None) -> bytes:
        """The fields a checkllm result has beyond a plain one's."""
        test, prompt, at = combination
        description = self._suite.tests[test].description
        provider = self._providers[at]
        if produced is None:
            return self._combinations.fields(test, description, prompt, provider)
        output = ""
        if produced.output is not None:
            output = wire.bounded_text(produced.output.text, self._max_output_chars)
        return self._combinations.fields(
            test, description, prompt, provider, produced.cost_usd, True, output
        )

    @staticmethod
    def message(results: list[bytes]) -> bytes:
        """The serialized `RunSuiteResponse` of `result`s."""
        return wire.results_message(results)


def grouped_builder(suite: CheckllmSuite) -> GroupedSummaryBuilder:
    """The run's summary builder, every test's checks declared in test order."""
    builder = GroupedSummaryBuilder()
    for plan in suite.plans():
        builder.declare(plan.names, [c.type for c in plan.checks])
    return builder


def summary_message(
    suite: CheckllmSuite,
    builder: GroupedSummaryBuilder,
    matrix: Matrix,
    stats: GenerationStats,
    observer: Any,
) -> pb.RunSuiteResponse:
    """The run's last message: its summary judged by the suite's gate (counted by the
    `observer`'s metrics), what generating outputs cost, and the prompt × provider matrix."""
    summary = builder.finish(suite.gate)
    if observer is not None:
        observer.observe_summary(summary)
    message = wire.summary_to_pb(summary)
    message.generation_cost_usd = stats.cost_usd
    message.generation_calls = stats.calls
    message.generation_cached = stats.cached
    message.generation_unpriced = stats.unpriced_calls > 0
    message.matrix.extend(
        pb.MatrixCell(
            prompt=c.prompt,
            provider=c.provider,
            cases=c.cases,
            cases_passed=c.cases_passed,
            cases_errored=c.cases_errored,
            pass_rate=c.pass_rate,
            generation_cost_usd=c.generation_cost_usd,
        )
        for c in matrix.cells
    )
    return pb.RunSuiteResponse(summary=message)
