"""A checkllm run of recorded outputs in the scoring workers: its cases checked and cut
into chunks in the serving process.

The serving process reads each case once: it parses it, matches it to its combination
(`RecordedCombinations`: a case naming none, a second case for one, and then
combinations with no output are the call's INVALID_ARGUMENT, every one reported) and
holds its output to the output limits, before any of it is scored. A case goes to a worker
as its output (its text, nearly always) and its combination (`WorkerJob.outputs`,
`combinations`); the combinations the document records follow the cases.

A worker scores a chunk (`checkllm_scorer`) and answers its results written by
`CheckllmResults` with the chunk's counts (`CheckllmCounts`), so the serving process
only adds up small objects and forwards bytes.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Sequence
from typing import Any

from scorewire.core.cost import LimitExceeded
from scorewire.core.model import Output
from scorewire.scoring import wire
from scorewire.scoring.chunks import BATCH_MAX_RESULTS, CHUNK_MAX_BYTES
from scorewire.scoring.limits import output_problem, short_output
from scorewire.scoring.plan_source import PlanSource
from scorewire.scoring.protocol import Reply, WorkerJob
from scorewire.settings import Settings
from scorewire.suites.checkllm_request import RecordedCombinations
from scorewire.suites.checkllm_suite import CheckllmSuite
from scorewire.v1 import scoring_pb2 as pb

OUTPUT_LIMIT = "max_output_bytes"
"""The setting an output over the output limits is refused by (RESOURCE_EXHAUSTED)."""


class RecordedCases:
    """A checkllm run's recorded cases, checked chunk by chunk (`take`), then `finish`.

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
        self._per_prompt = len(suite.providers)
        self._per_test = len(suite.prompts) * self._per_prompt
        self._over: tuple[int, tuple[str, str]] | None = None
        self.clean = True
        """Whether no case checked so far has a problem."""

    def take(
        self,
        cases: Sequence[Any],
        start: int,
        outputs: list[str | bytes],
        combinations: list[int],
    ) -> int:
        """Check the cases of the chunk that starts at `start` (at most
        `BATCH_MAX_RESULTS` cases, or `CHUNK_MAX_BYTES` of them), appending each one's
        output as a worker is sent it (`sent_output`) and its combination (its number in
        run order, `CheckllmSuite.combination`) while `clean`;
        the position after the chunk. After a problem nothing is appended, but every case
        is still checked, so that every problem is reported."""
        parse, short, caps, named = self._parse, self._short, self._caps, self.combinations
        tests, prompts, providers, first = named.tests, named.prompts, named.providers, named.first
        per_prompt, per_test = self._per_prompt, self._per_test
        stop, size = min(len(cases), start + BATCH_MAX_RESULTS), 0
        for i in range(start, stop):
            if size >= CHUNK_MAX_BYTES:
                return i
            data = cases[i]
            size += len(data)
            c = parse(data)
            test, prompt, provider = c.test, c.prompt, c.provider
            t, p, v = tests.get(test), prompts.get(prompt), providers.get(provider)
            if t is None or p is None or v is None:
                resolved = named.resolve(i, test, prompt, provider)
                if resolved is None:
                    self.clean = False
                    continue
                number, t = resolved, resolved // per_test
            else:  # `CheckllmSuite.combination_number`, inline: this runs once a case
                number = t * per_test + p * per_prompt + v
            if first.setdefault(number, i) != i:
                named.second(i, number)
                self.clean = False
                continue
            output = c.output
            text = output.text
            sent: str | bytes = text
            if output.HasField("value") or output.value_json or output.HasField("metadata"):
                if output.value_json:  # a checkllm case's sample is not read, its output is
                    bad = wire.json_field_violations(pb.Sample(), output, f"cases[{i}]")
                    if bad:
                        named.violations.extend(bad)
                        self.clean = False
                        continue
                sent = output.SerializeToString()
            if len(text) > short[t]:  # else far within every limit, without measuring
                problem = output_problem(text, f"cases[{i}].output", caps[t], self._settings)
                if problem is not None:
                    if self._over is None or number < self._over[0]:
                        self._over = (number, problem)  # the first in run order wins
                    self.clean = False
                    continue
            if self.clean:
                outputs.append(sent)
                combinations.append(number)
        return stop

    def finish(self) -> list[int]:
        """The combinations the document records (they follow the cases), once every
        case is checked; raises the run's problem, if any."""
        own = self.combinations.finish()
        if self._over is not None:
            raise LimitExceeded(OUTPUT_LIMIT, *self._over[1])
        return own


def sent_output(sent: str | bytes) -> Output:
    """A recorded case's output as a check reads it, from what `RecordedCases.take` made
    of it: its text (it has nothing more), or its serialized message."""
    if isinstance(sent, str):
        return Output(sent)
    return wire.output_from_pb(pb.Output.FromString(sent))


def checkllm_job_maker(
    key: bytes, source: PlanSource, timeout_s: float, bounds_ms: tuple[float, ...] | None
) -> Callable[[list[str | bytes] | None, list[int], int], WorkerJob]:
    """Makes the `CHECKLLM` job of a chunk: its cases' outputs (None: the document
    records them), their combinations, and the run index of the first."""

    def job(outputs: list[str | bytes] | None, combinations: list[int], first: int) -> WorkerJob:
        return WorkerJob(
            key, source, Reply.CHECKLLM, timeout_s, first=first, count=len(combinations),
            bounds_ms=bounds_ms, combinations=combinations, outputs=outputs,
        )  # fmt: skip

    return job


async def checkllm_jobs(
    cases: Sequence[Any],
    checker: RecordedCases,
    make: Callable[[list[str | bytes] | None, list[int], int], WorkerJob],
) -> AsyncIterator[WorkerJob]:
    """The chunk jobs of a run: the request's cases, cut as a plain batch's are, each
    chunk's checked before it goes (`RecordedCases.take`); then the combinations the
    document records. After a problem no chunk goes, the rest are still checked, and the
    problems are raised after the last. The event loop gets a turn after every chunk.

    An output goes as its text (what nearly every recorded output is), or as its
    serialized message when it has a value or metadata too: the worker then parses
    nothing but what it needs."""
    start = 0
    while start < len(cases):
        outputs: list[str | bytes] = []
        combinations: list[int] = []
        end = checker.take(cases, start, outputs, combinations)
        if checker.clean:
            yield make(outputs, combinations, start)
        start = end
        await asyncio.sleep(0)
    own = checker.finish()
    for at in range(0, len(own), BATCH_MAX_RESULTS):
        yield make(None, own[at : at + BATCH_MAX_RESULTS], len(cases) + at)
