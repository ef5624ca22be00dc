"""A checkllm run of recorded outputs in the scoring workers: its cases checked and cut
into chunks in the serving process.

The serving process reads each case once: it parses it, matches it to its combination
(`RecordedCombinations`: a case naming none, a second case for one, and then
combinations with no output are the call's INVALID_ARGUMENT, every one reported) and
holds its output to the output limits, before any of it is scored. A case goes to a worker
as its output (its text, nearly always) and its combination as three ints
(`WorkerJob.outputs`, `combinations`); the combinations the document records follow
the cases.

A worker scores a chunk (`checkllm_scorer`) and answers its results written by
`CheckllmResults` with the chunk's counts (`CheckllmCounts`), so the serving process
only adds up small objects and forwards bytes.
"""

from __future__ import annotations

from array import array
from collections.abc import Callable, Iterable, Iterator, Sequence
from itertools import chain
from typing import Any

from scorewire.core.cost import LimitExceeded
from scorewire.core.model import Output
from scorewire.scoring import wire
from scorewire.scoring.chunks import BATCH_MAX_RESULTS, CHUNK_MAX_BYTES
from scorewire.scoring.limits import output_problem, short_output
from scorewire.scoring.plan_source import PlanSource
from scorewire.scoring.protocol import Reply, WorkerJob
from scorewire.settings import Settings
from scorewire.suites.checkllm_request import Combination, RecordedCombinations
from scorewire.suites.checkllm_suite import CheckllmSuite
from scorewire.v1 import scoring_pb2 as pb

OUTPUT_LIMIT = "max_output_bytes"
"""The setting an output over the output limits is refused by (RESOURCE_EXHAUSTED)."""


class RecordedCases:
    """A checkllm run's recorded cases, checked one by one (`checked`), then `finish`.

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
        self._over: tuple[Combination, tuple[str, str]] | None = None

    def checked(
        self, cases: Iterable[Any]
    ) -> Iterator[tuple[Combination | None, str | pb.Output, int]]:
        """Each case checked, in order: its combination (None: the case has a problem),
        its output as a worker is sent it (`sent_output`), and its size in bytes."""
        parse, add, short, caps = self._parse, self.combinations.add, self._short, self._caps
        for i, data in enumerate(cases):
            c = parse(data)
            combination = add(i, c.test, c.prompt, c.provider)
            if combination is None:
                yield None, "", 0
                continue
            output = c.output
            text = output.text
            sent: str | pb.Output = text
            if output.HasField("value") or output.value_json or output.HasField("metadata"):
                sent = output
                if output.value_json:  # a checkllm case's sample is not read, its output is
                    bad = wire.json_field_violations(pb.Sample(), output, f"cases[{i}]")
                    if bad:
                        self.combinations.violations.extend(bad)
                        yield None, "", 0
                        continue
            test = combination[0]
            if len(text) > short[test]:  # else far within every limit, without measuring
                problem = output_problem(text, f"cases[{i}].output", caps[test], self._settings)
                if problem is not None:
                    if self._over is None or combination < self._over[0]:
                        self._over = (combination, problem)  # the first in run order wins
                    yield None, "", 0
                    continue
            yield combination, sent, len(data)

    def finish(self) -> list[Combination]:
        """The combinations the document records (they follow the cases), once every
        case is checked; raises the run's problem, if any."""
        own = self.combinations.finish()
        if self._over is not None:
            raise LimitExceeded(OUTPUT_LIMIT, *self._over[1])
        return own


def sent_output(sent: str | bytes | pb.Output) -> Output:
    """A recorded case's output as a check reads it, from what `RecordedCases.checked` made
    of it: its text (it has nothing more), or its message (as sent to a worker, bytes)."""
    if isinstance(sent, str):
        return Output(sent)
    if isinstance(sent, bytes):
        sent = pb.Output.FromString(sent)
    return wire.output_from_pb(sent)


def checkllm_job_maker(
    key: bytes, source: PlanSource, timeout_s: float, bounds_ms: tuple[float, ...] | None
) -> Callable[[list[str | bytes] | None, list[Combination], int], WorkerJob]:
    """Makes the `CHECKLLM` job of a chunk: its cases' outputs (None: the document
    records them), their combinations, and the run index of the first."""

    def job(
        outputs: list[str | bytes] | None, combinations: list[Combination], first: int
    ) -> WorkerJob:
        packed = array("i", chain.from_iterable(combinations))
        return WorkerJob(
            key, source, Reply.CHECKLLM, timeout_s, first=first, count=len(combinations),
            bounds_ms=bounds_ms, combinations=packed, outputs=outputs,
        )  # fmt: skip

    return job


def checkllm_jobs(
    cases: Sequence[Any],
    checker: RecordedCases,
    make: Callable[[list[str | bytes] | None, list[Combination], int], WorkerJob],
) -> Iterator[WorkerJob]:
    """The chunk jobs of a run: the request's cases, cut as a plain batch's are (at
    most `BATCH_MAX_RESULTS` cases or `CHUNK_MAX_BYTES`), each checked before its chunk
    goes; then the combinations the document records. After a problem no chunk goes,
    but every case is still checked, and the problems are raised after the last.

    An output goes as its text (what nearly every recorded output is), or as its
    serialized message when it has a value or metadata too: the worker then parses
    nothing but what it needs."""
    outputs: list[str | bytes] = []
    combinations: list[Combination] = []
    size = first = 0
    stopped = False
    for i, (combination, sent, sent_bytes) in enumerate(checker.checked(cases)):
        if combination is None or stopped:
            stopped = True  # the call fails: nothing more is worth scoring
            continue
        outputs.append(sent if isinstance(sent, str) else sent.SerializeToString())
        combinations.append(combination)
        size += sent_bytes
        if len(outputs) >= BATCH_MAX_RESULTS or size >= CHUNK_MAX_BYTES:
            yield make(outputs, combinations, first)
            outputs, combinations, size, first = [], [], 0, i + 1
    own = checker.finish()
    if outputs:
        yield make(outputs, combinations, first)
    for at in range(0, len(own), BATCH_MAX_RESULTS):
        yield make(None, own[at : at + BATCH_MAX_RESULTS], len(cases) + at)
