"""A checkllm run's results and summary on the wire: one conversion for both its paths.

A combination is scored in the serving process (its output generated, or a check that
waits on I/O) or in a scoring worker (recorded outputs, synchronous checks:
`scoring.executor`). Either way its result is written here, as the bytes of a
`CaseResult` with its combination, and the run ends with the summary written here, so
the two paths answer the same bytes.
"""

from __future__ import annotations

import json
from typing import Any

from scorewire.core.values import loads_fast
from scorewire.engine.runner import CaseResult, NamedCheck
from scorewire.generation.generator import GenerationStats, GroupedSummaryBuilder, Produced
from scorewire.scoring import wire
from scorewire.suites.checkllm_request import Matrix, combinations
from scorewire.suites.checkllm_suite import CheckllmSuite
from scorewire.v1 import scoring_pb2 as pb

COMBINATION_BYTES = 200
"""What `CombinationBytes` keeps of one combination, generously: its sample field and
its combination's fields (~40 bytes each), two bytes objects' headers and two list slots."""
COMBINATIONS_KEPT = 65_536
"""Combinations of a suite whose bytes `CombinationBytes` keeps (those of the first tests;
a bigger document's others are written each time): a 4 MB document may have millions of
combinations, and what a suite keeps must stay within the plan cache's budget."""


def kept_bytes(suite: CheckllmSuite) -> int:
    """What `CombinationBytes` may keep of `suite` (for the plan cache's estimate)."""
    return min(combinations(suite), COMBINATIONS_KEPT) * COMBINATION_BYTES


class CombinationBytes:
    """What is written for each combination of a suite, kept with the suite
    (`CheckllmSuite.wire_parts`) and written on first use: the sample field of the case
    the native kernel reads, and the fields a recorded combination's result carries
    beyond a plain result's. A run of a suite scored before writes neither again."""

    def __init__(self, suite: CheckllmSuite) -> None:
        self._suite = suite
        kept = min(combinations(suite), COMBINATIONS_KEPT)
        self._samples: list[bytes | None] = [None] * kept
        self._recorded: list[bytes | None] = [None] * kept
        self._expected: dict[int, str | None] = {}
        self._fields = wire.CombinationFields()
        self.providers = [p.id for p in suite.providers]
        """Each provider's id, by position."""

    @classmethod
    def of(cls, suite: CheckllmSuite) -> CombinationBytes:
        """The suite's own (made on first use)."""
        if suite.wire_parts is None:
            suite.wire_parts = cls(suite)
        parts: CombinationBytes = suite.wire_parts
        return parts

    def expected_json(self, test: int) -> str | None:
        """The test's expected value as the JSON text the kernel reads ("" for none);
        None when that text would not read back as the very value Python checks get (a
        YAML date, a non-string key, NaN): the kernel cannot score the test then."""
        if test not in self._expected:
            self._expected[test] = _expected_json(self._suite.tests[test].vars.get("expected"))
        return self._expected[test]

    def sample_field(self, number: int) -> bytes:
        """The sample field of the case the kernel reads for the combination `number`
        (its test's `expected_json` is not None)."""
        field = self._samples[number] if number < len(self._samples) else None
        if field is None:
            test, prompt, at = self._suite.combination(number)
            expected = self.expected_json(test)
            assert expected is not None, "the kernel reads no sample it cannot have exactly"
            sample_id = self._suite.sample_id(test, prompt, self.providers[at])
            field = wire.sample_field(sample_id, expected)
            if number < len(self._samples):
                self._samples[number] = field
        return field

    def recorded(self, number: int) -> bytes:
        """The fields the result of the combination `number`, its output recorded,
        carries beyond a plain result's."""
        fields = self._recorded[number] if number < len(self._recorded) else None
        if fields is None:
            test, prompt, at = self._suite.combination(number)
            description = self._suite.tests[test].description
            fields = self._fields.fields(test, description, prompt, self.providers[at])
            if number < len(self._recorded):
                self._recorded[number] = fields
        return fields

    def generated(self, number: int, produced: Produced, cap: int) -> bytes:
        """The fields the result of the combination `number` carries beyond a plain
        result's when its output was generated: also what that cost, and the output cut
        to `cap`."""
        test, prompt, at = self._suite.combination(number)
        output = ""
        if produced.output is not None:
            output = wire.bounded_text(produced.output.text, cap)
        return self._fields.fields(
            test, self._suite.tests[test].description, prompt, self.providers[at],
            produced.cost_usd, True, output,
        )  # fmt: skip


def _expected_json(expected: Any) -> str | None:
    """`CombinationBytes.expected_json` of a value."""
    if expected is None:
        return ""
    try:
        text = json.dumps(expected, allow_nan=False, separators=(",", ":"))
    except (TypeError, ValueError):
        return None
    return text if loads_fast(text) == expected else None


class CheckllmResults:
    """Writes the results of one run of a checkllm suite (`message(results)`)."""

    def __init__(self, suite: CheckllmSuite, max_reason_chars: int, max_output_chars: int) -> None:
        """`max_output_chars`: where a generated output sent back is cut."""
        self.suite = suite
        """The suite whose results are written."""
        self._writer = wire.ResultWriter(max_reason_chars)
        self._heads: list[list[tuple[bytes, NamedCheck]] | None] = [None] * len(suite.tests)
        self._max_output_chars = max_output_chars
        self._bytes = CombinationBytes.of(suite)

    def result(self, number: int, result: CaseResult, produced: Produced | None) -> bytes:
        """The `CaseResultBatch.results` field of the combination `number`: its scores,
        which combination it is, and (`produced`: its output was generated; None:
        recorded) what producing its output cost and the output, cut."""
        test = self.suite.combination(number)[0]
        heads = self._heads[test]
        if heads is None:
            heads = self._heads[test] = self._writer.heads(self.suite.plans()[test].checks)
        if produced is None:
            tail = self._bytes.recorded(number)
        else:
            tail = self._bytes.generated(number, produced, self._max_output_chars)
        return wire.result_field(self._writer.result(heads, result) + tail)

    def scored(self, number: int, fields: bytes) -> bytes:
        """`result` of a recorded combination whose `CaseResult` fields (index, sample id,
        scores, passed) the native kernel wrote: the same bytes (`tests/engine/
        test_native.py` holds the kernel's fields to `wire.ResultWriter`'s)."""
        return wire.result_field(fields + self._bytes.recorded(number))

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
