"""Scoring cases: one at a time, or a batch concurrently under a bound.

The hot path is the all-deterministic plan: every check is a plain function, so a case
is scored inline with no task, no await and no per-check allocation beyond its Score.
Plans with judge-backed checks run each case as a task, at most `concurrency` at once,
and yield results in completion order.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import (
    AsyncGenerator,
    AsyncIterable,
    AsyncIterator,
    Iterable,
    Mapping,
    MutableSequence,
    Sequence,
)
from dataclasses import dataclass, field
from typing import Any, Protocol

from scorewire.core.context import CheckContext
from scorewire.core.model import ErrorCode, Output, Sample, Score
from scorewire.engine.execute import DEFAULT_CHECK_TIMEOUT_S, run_check, run_check_sync
from scorewire.engine.metering import whole_text_caps
from scorewire.engine.spec import CompiledCheck

# How many inline-scored cases run between two yields to the event loop, so that a big
# deterministic batch does not starve other requests on the same loop.
_YIELD_EVERY = 128

# The progress protocol of `score_batch_sync`: before each check it writes what it runs
# into these slots of a float array, so that a watcher elsewhere (the scoring pool's
# driver thread, reading a worker's shared memory) can stop a check stuck past its limit,
# even inside C code, and knows which (case, check) to blame. The native kernel writes
# the same slots (all but CASE_BASE).
STARTED_AT = 0
"""`time.monotonic()` when the running check (or compilation) began; 0 when idle."""
CASE_POS = 1
"""Position in the batch of the case being scored."""
CHECK_IDX = 2
"""Index of the running check; -1 while compiling."""
LIMIT_S = 3
"""Seconds the running check may take before the watcher stops it."""
CASE_BASE = 4
"""Position in the job of the batch's first case: a job scored as several batches (a
checkllm chunk, a batch per run of one test's cases) names a case `CASE_BASE +
CASE_POS`; 0 otherwise. The scorer of such a job writes it, never the batch scorers."""
PROGRESS_SLOTS = 5


class Case:
    """A sample and the output to score for it; `index` is its position in the batch."""

    __slots__ = ("index", "output", "sample")

    def __init__(self, sample: Sample, output: Output, index: int = 0) -> None:
        self.sample = sample
        self.output = output
        self.index = index


class CaseResult:
    """The scores of one case, aligned with the plan's checks."""

    __slots__ = ("index", "passed", "sample_id", "scores")

    def __init__(self, index: int, sample_id: str, scores: list[Score]) -> None:
        self.index = index
        self.sample_id = sample_id
        self.scores = scores
        passed = True
        for s in scores:  # a loop: all() over a generator costs more than the test
            if not s.passed:
                passed = False
                break
        self.passed = passed

    def __repr__(self) -> str:
        return f"CaseResult({self.sample_id!r}, passed={self.passed}, scores={self.scores!r})"


class NamedCheck(Protocol):
    """What labelling a score needs of its check: a compiled check, or a worker's summary."""

    @property
    def name(self) -> str:
        """The check's name in results."""

    @property
    def type(self) -> str:
        """The registered type name."""


class PlanShape(Protocol):
    """The checks of a plan, whether compiled here or in a scoring worker."""

    @property
    def checks(self) -> Sequence[NamedCheck]:
        """The checks in result order."""

    @property
    def whole_text_caps(self) -> tuple[int | None, ...]:
        """The caps of the checks that read a case's whole output (see `engine.metering`)."""


@dataclass(slots=True)
class Plan:
    """The compiled checks of a run, in result order."""

    checks: list[CompiledCheck]
    check_timeout_s: float = DEFAULT_CHECK_TIMEOUT_S
    any_async: bool = field(init=False, default=False)
    """Whether any check needs the event loop (set from `checks`)."""
    whole_text_caps: tuple[int | None, ...] = field(init=False, default=())
    """The caps of the checks that read a case's whole output (see `engine.metering`)."""
    native: Any = field(init=False, default=None, repr=False, compare=False)
    """The native kernel's plan of this plan once it was built (False: the kernel is of
    no use to it). Kept here, it lives exactly as long as the plan: a plan cache's bound
    covers both (`scoring.compiler.native_plan`)."""

    def __post_init__(self) -> None:
        self.any_async = any(c.is_async for c in self.checks)
        self.whole_text_caps = whole_text_caps(self.checks)

    @property
    def names(self) -> list[str]:
        """Check names in result order."""
        return [c.name for c in self.checks]

    @property
    def uses_judge(self) -> bool:
        """Whether any check may call a judge."""
        return any(c.uses_judge for c in self.checks)


def score_case_sync(plan: Plan, case: Case, ctx: CheckContext) -> CaseResult:
    """Score a case whose checks are all synchronous (`not plan.any_async`)."""
    sample, output = case.sample, case.output
    scores = [run_check_sync(c, sample, output, ctx) for c in plan.checks]
    return CaseResult(case.index, sample.id, scores)


_LATE = "the request deadline expired before the check ran"


def score_batch_sync(
    plan: Plan,
    cases: Sequence[Case],
    ctx: CheckContext,
    *,
    progress: MutableSequence[float] | None = None,
    deadline: float | None = None,
    given: Mapping[int, Mapping[int, Score]] | None = None,
) -> list[CaseResult]:
    """Score a batch of a synchronous plan, case after case, reporting progress.

    `progress` receives the slots above before every check. A check is not started after
    `deadline` (`time.monotonic()`): it scores DEADLINE_EXCEEDED. `given[pos][j]` is the
    score of check `j` of the case at position `pos` without running it (a check that a
    watcher stopped on an earlier attempt).
    """
    if progress is None and deadline is None and not given:
        return [score_case_sync(plan, case, ctx) for case in cases]
    p = progress if progress is not None else [0.0] * PROGRESS_SLOTS
    given = given or {}
    monotonic = time.monotonic
    results = []
    for pos, case in enumerate(cases):
        fixed = given.get(pos, {})
        sample, output = case.sample, case.output
        scores = []
        p[CASE_POS] = pos  # before any check of the case starts: the slots name it
        for j, cc in enumerate(plan.checks):
            if j in fixed:
                scores.append(fixed[j])
                continue
            now = monotonic()
            if deadline is not None and now >= deadline:
                scores.append(Score.fail_with_error(ErrorCode.DEADLINE_EXCEEDED, _LATE))
                continue
            p[CHECK_IDX] = j
            p[STARTED_AT] = now
            scores.append(run_check_sync(cc, sample, output, ctx))
        p[STARTED_AT] = 0.0
        results.append(CaseResult(case.index, sample.id, scores))
    return results


async def score_case(plan: Plan, case: Case, ctx: CheckContext) -> CaseResult:
    """Score one case; synchronous checks run inline, the others concurrently."""
    sample, output = case.sample, case.output
    if not plan.any_async:
        return score_case_sync(plan, case, ctx)
    scores: list[Score | None] = [None] * len(plan.checks)
    pending: list[tuple[int, CompiledCheck]] = []
    for i, c in enumerate(plan.checks):
        if c.is_async:
            pending.append((i, c))
        else:
            scores[i] = run_check_sync(c, sample, output, ctx)
    if len(pending) == 1:
        i, c = pending[0]
        scores[i] = await run_check(c, sample, output, ctx, plan.check_timeout_s)
    else:
        got = await asyncio.gather(
            *(run_check(c, sample, output, ctx, plan.check_timeout_s) for _, c in pending)
        )
        for (i, _), s in zip(pending, got, strict=True):
            scores[i] = s
    return CaseResult(case.index, sample.id, [s for s in scores if s is not None])


async def run_cases(
    plan: Plan,
    cases: Iterable[Case] | AsyncIterable[Case],
    ctx: CheckContext,
    *,
    concurrency: int = 32,
) -> AsyncIterator[CaseResult]:
    """Score every case and yield its result as soon as it is ready.

    Every case yields exactly one result. Closing the iterator early (the caller went
    away) cancels the cases still in flight, which stops their judge calls.
    """
    if concurrency < 1:
        raise ValueError("concurrency must be at least 1")
    if not plan.any_async and isinstance(cases, Iterable):
        for n, case in enumerate(cases, 1):
            yield score_case_sync(plan, case, ctx)
            if n % _YIELD_EVERY == 0:
                await asyncio.sleep(0)
        return
    inner = _run_concurrently(plan, cases, ctx, concurrency)
    try:
        async for result in inner:
            yield result
    finally:
        # Closing this generator must reach the inner one now, not at garbage
        # collection, so that cases in flight are cancelled at once.
        await inner.aclose()


class _Finished:
    """A lane's last word on the results queue: it ran out of cases, or pulling failed."""

    __slots__ = ("error",)

    def __init__(self, error: BaseException | None = None) -> None:
        self.error = error


async def _run_concurrently(
    plan: Plan, cases: Iterable[Case] | AsyncIterable[Case], ctx: CheckContext, concurrency: int
) -> AsyncGenerator[CaseResult, None]:
    """Up to `concurrency` lanes, each scoring a case and then pulling the next itself.

    A lane starts its next case in the step that finished the last one, so a slot never
    waits for this generator's consumer to come round: with judge calls in flight the
    loop's ready queue made that wait several milliseconds per case, leaving a slot idle
    about 10 % of the time. Lanes open only as cases arrive, so one case costs one task.
    """
    source_async = aiter(cases) if isinstance(cases, AsyncIterable) else None
    source_sync = iter(cases) if isinstance(cases, Iterable) and source_async is None else None
    pulling = asyncio.Lock()
    # Bounded: a consumer that stops reading (a slow client) stops the lanes after
    # `concurrency` unread results, instead of every remaining case being scored (and
    # paid for) into memory.
    done: asyncio.Queue[CaseResult | _Finished] = asyncio.Queue(concurrency)
    lanes: list[asyncio.Task[None]] = []
    exhausted = False

    async def pull() -> Case | None:
        nonlocal exhausted
        if exhausted:
            return None
        case: Case | None
        if source_sync is not None:
            case = next(source_sync, None)
        else:
            assert source_async is not None
            async with pulling:  # an async generator cannot be awaited twice at once
                if exhausted:
                    return None
                try:
                    case = await anext(source_async)
                except StopAsyncIteration:
                    case = None
        if case is None:
            exhausted = True
        return case

    async def lane(case: Case | None) -> None:
        try:
            while case is not None:
                await done.put(await score_case(plan, case, ctx))
                case = await pull()
        except asyncio.CancelledError:
            raise
        except BaseException as err:  # handed to the consumer, raised there
            await done.put(_Finished(err))
            return
        await done.put(_Finished())

    live = 0
    try:
        while True:
            # Open lanes while there is room and a case to give each; afterwards a lane
            # pulls its own next case, so this loop only opens the first ones.
            while live < concurrency and not exhausted:
                case = await pull()
                if case is None:
                    break
                lanes.append(asyncio.create_task(lane(case)))
                live += 1
            if live == 0:
                return
            item = await done.get()
            if isinstance(item, _Finished):
                live -= 1
                if item.error is not None:
                    raise item.error
                continue
            yield item
    finally:
        pending = [t for t in lanes if not t.done()]
        for task in pending:
            task.cancel()
        if pending:
            await asyncio.gather(*pending, return_exceptions=True)


async def score_one(
    checks: Sequence[CompiledCheck],
    sample: Sample,
    output: Output,
    ctx: CheckContext,
    *,
    check_timeout_s: float = DEFAULT_CHECK_TIMEOUT_S,
) -> list[Score]:
    """Score a single output against a list of compiled checks."""
    plan = Plan(list(checks), check_timeout_s)
    return (await score_case(plan, Case(sample, output), ctx)).scores
