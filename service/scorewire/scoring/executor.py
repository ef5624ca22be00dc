"""Where a plan is compiled and where its cases are scored: one rule for every entry point.

The rule, which every entry point follows through an `Executor`:

1. **Compiling.** A request's plan is compiled first in a scoring worker, where it is
   held to the request limits and killed if it runs past `plan_compile_timeout_s`; the
   serving process keeps what it learns of the plan (`PlanInfo`) by key. A plan the
   serving process scores itself is compiled there too, once per key, off the event
   loop, by the same `compile_plan`. Without workers (the in-process API, the CLI) the
   executor compiles here.
2. **Scoring.** By the plan, then by the number of cases:
   - a plan with a check that waits on I/O (a judge, an embedding service, a custom
     coroutine: `info.any_async`) is scored in the serving process, on its event loop,
     its cases concurrently;
   - a checkllm document (a plan per test) in a RunSuite is scored in the workers, in
     chunks as a batch is (`checkllm_chunks`), when every combination has a recorded
     output (from the request's cases or the document's own `output(s)`) and no test's
     checks wait on I/O; any other checkllm run (outputs to generate, judge checks) and
     a checkllm ScoreStream are scored in the serving process, on its event loop;
   - one case (a unary Score) of a plan the workers measured cheap (at most
     `INLINE_SCORE_MS` per KiB of request, compiled within `INLINE_COMPILE_S`), in a
     request of at most `inline_score_max_bytes`, is scored inline: that costs less than
     the round trip to a worker;
   - everything else is scored in the workers: a batch in chunks of at most 256 cases
     (or `CHUNK_MAX_BYTES` of them), a ScoreStream case by case, a few at once;
   - wherever a synchronous plan is scored, the native kernel answers the checks it has
     twins of, when it is installed and on (`native_kernel`), and the engine the rest.

Every path answers with the same bytes (the tests hold the paths together); only where
the CPU is spent differs.
"""

from __future__ import annotations

import asyncio
import time
from collections import OrderedDict
from collections.abc import AsyncIterator, Callable, Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from scorewire.core import tracing
from scorewire.core.context import CheckContext
from scorewire.core.cost import LimitExceeded
from scorewire.core.errors import FieldViolation, SpecError
from scorewire.engine import native
from scorewire.engine.metering import request_meter
from scorewire.engine.runner import Case, CaseResult, Plan, run_cases, score_case, score_case_sync
from scorewire.engine.summary import SummaryBuilder
from scorewire.metrics.runs import Tally, tally_from_counts
from scorewire.scoring import wire
from scorewire.scoring.chunks import BATCH_MAX_RESULTS, CHUNKS_BUFFERED, ChunkRun
from scorewire.scoring.compiler import CompiledPlan, compile_plan, native_plan
from scorewire.scoring.limits import check_extras
from scorewire.scoring.plan_source import PlanSource, SourceMemo, source_bytes
from scorewire.scoring.plans import PLAN_CACHE_SIZE, PlanCache, PlanInfo
from scorewire.scoring.pool import CompileTimeout, ScoringPool
from scorewire.scoring.protocol import (
    Compiled,
    Fault,
    Invalid,
    OverLimit,
    Reply,
    Scored,
    WorkerJob,
    unslim,
)
from scorewire.settings import Settings
from scorewire.v1 import scoring_pb2 as pb

INLINE_COMPILE_S = 0.02
"""A plan may be compiled in the serving process for inline scoring only if a worker
compiled it faster than this (CPU seconds)."""
INLINE_SCORE_MS = 1.0
"""A case is scored inline only if the workers scored its plan within this per KiB of
request."""


class DeadlineExpired(Exception):
    """The request's deadline passed while its checks ran (DEADLINE_EXCEEDED)."""

    def __init__(self) -> None:
        super().__init__("the deadline expired while checks ran")


class WorkerFault(RuntimeError):
    """A fault of ours in a scoring worker (INTERNAL; the detail goes to the log)."""


@dataclass(slots=True)
class OneCase:
    """One case to score (a unary Score), in the forms each path reads."""

    size: int
    """Serialized bytes of the request it came in."""
    request: bytes | None
    """The serialized request, when small enough to be scored inline (the kernel reads
    it); None for a big one, whose copy is not kept while its checks run."""
    case: Callable[[], Case]
    """The case as the engine's Case (made only where a Python check reads it)."""
    case_bytes: Callable[[], bytes]
    """The case as a serialized `Case` (made only when it goes to a worker)."""


@dataclass(slots=True)
class OneScored:
    """A scored case: the response (a message, or its bytes) and what metrics need."""

    message: pb.ScoreResponse | bytes
    result: CaseResult | None = None
    """The result (reasons left out when a worker scored it); None when `tally` has it."""
    tally: Tally | None = None


class Executor:
    """Compiles plans and scores their cases by the module's rule."""

    def __init__(
        self,
        settings: Settings,
        *,
        workers: bool = True,
        bounds_ms: tuple[float, ...] | None = None,
    ) -> None:
        """`workers`: score in a pool of worker processes (a server), else here;
        `bounds_ms`: the metrics histogram's bounds a scored chunk is tallied into."""
        self.settings = settings
        self.bounds_ms = bounds_ms
        self.pool = ScoringPool(settings) if workers else None
        self.sources = SourceMemo()
        """Recent request sources, remembered with their keys."""
        # The plans this process scores itself: compiled on this thread, off the loop.
        self._thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="scorewire-plan")
        self.here: PlanCache[CompiledPlan] = PlanCache(max_bytes=settings.plan_cache_bytes)
        self._infos: OrderedDict[bytes, PlanInfo] = OrderedDict()
        self._compiling: set[bytes] = set()
        self._native_ctx = CheckContext(extras=check_extras(settings))
        """The context native plans of inline cases are built with (limits, flags)."""

    async def start(self) -> None:
        """Start the worker processes, if any."""
        if self.pool is not None:
            await self.pool.start()

    async def close(self) -> None:
        """Stop the workers and the plan thread."""
        self._thread.shutdown(wait=False, cancel_futures=True)
        if self.pool is not None:
            await self.pool.close()

    @property
    def share(self) -> int:
        """How many jobs one request may keep in the workers at once."""
        return self.pool.share if self.pool is not None else 1

    def chunk_run(
        self, jobs: Iterator[WorkerJob] | AsyncIterator[WorkerJob], deadline: float | None
    ) -> ChunkRun:
        """A batch's chunk jobs, to run in the workers within the caller's deadline:
        `suite_chunks_in_flight` of them at once (default all workers but one, at least
        two), at most `CHUNKS_BUFFERED` times that sent ahead of the reader."""
        configured = self.settings.suite_chunks_in_flight
        share = configured if configured is not None else max(2, self.share)
        return ChunkRun(jobs, lambda job: self.run(job, deadline), share, CHUNKS_BUFFERED * share)

    # ---- compiling ---------------------------------------------------------------------

    async def info(
        self, key: bytes, source: PlanSource, deadline: float | None, *, list_suites: bool = False
    ) -> PlanInfo:
        """What the plan is, compiled (and kept) within the limits: SpecError for a bad
        source, LimitExceeded for one past a limit."""
        info = self._infos.get(key)
        if info is not None and not list_suites:
            self._infos.move_to_end(key)
            return info
        if self.pool is None:
            info = (await self.compiled_here(key, source)).info
        else:
            job = WorkerJob(
                key, source, Reply.PLAN, self.settings.check_timeout_s, list_suites=list_suites
            )
            info = (await self._answer(job, deadline)).info
        self._infos[key] = info
        if len(self._infos) > PLAN_CACHE_SIZE:
            self._infos.popitem(last=False)
        return info

    async def compiled_here(self, key: bytes, source: PlanSource) -> CompiledPlan:
        """The plan compiled in this process (kept by key), off the event loop."""
        return await asyncio.get_running_loop().run_in_executor(
            self._thread, self._compile_here, key, source
        )

    def _compile_here(self, key: bytes, source: PlanSource) -> CompiledPlan:
        meter = request_meter(self.settings)
        compiled: list[CompiledPlan] = []

        def build() -> CompiledPlan:
            compiled.append(compile_plan(source, self.settings, meter=meter))
            return compiled[0]

        return self.here.get_or_build(
            key, build, source_bytes(source), lambda: compiled[0].compiled_bytes
        )

    # ---- the workers -------------------------------------------------------------------

    async def run(self, job: WorkerJob, deadline: float | None) -> Scored:
        """A worker's scored answer to `job`, within the caller's deadline."""
        answer = await self._answer(job, deadline)
        if not isinstance(answer, Scored):
            raise WorkerFault(f"a scoring worker answered {type(answer).__name__} to a job")
        return answer

    async def _answer(self, job: WorkerJob, deadline: float | None) -> Compiled | Scored:
        assert self.pool is not None
        remaining = None if deadline is None else deadline - time.monotonic()
        job.deadline = deadline
        job.compile_timeout_s = self.settings.plan_compile_timeout_s
        name = "scorewire.plan" if job.reply == Reply.PLAN else "scorewire.cases"
        try:
            with tracing.span(name, {tracing.CASES: job.count}):
                async with asyncio.timeout(remaining):
                    answer = await self.pool.run(job)
        except TimeoutError:
            raise DeadlineExpired() from None
        except CompileTimeout as err:
            raise LimitExceeded(
                "plan_compile_timeout_s",
                "checks",
                f"compiling the checks ran past plan_compile_timeout_s ({err.limit_s:g} s); "
                "the work was stopped",
            ) from None
        if isinstance(answer, Invalid):
            raise SpecError([FieldViolation(f, d) for f, d in answer.violations])
        if isinstance(answer, OverLimit):
            raise LimitExceeded(answer.setting, answer.field, answer.message)
        if isinstance(answer, Fault):
            raise WorkerFault(f"scoring worker fault: {answer.detail}")
        assert isinstance(answer, Compiled | Scored)
        return answer

    # ---- one case ----------------------------------------------------------------------

    async def score_one(
        self, key: bytes, source: PlanSource, info: PlanInfo, one: OneCase, ctx: CheckContext
    ) -> OneScored:
        """Score one case: here for a plan that waits on I/O, else inline or in a worker."""
        if info.any_async:
            compiled = await self.compiled_here(key, source)
            with tracing.span("scorewire.cases", {tracing.CASES: 1}):
                result = await score_case(compiled.plan, one.case(), ctx)
            return OneScored(self.score_response(compiled, result), result)
        inline = self._inline(key, info, one.size)
        if inline is not None:
            kernel = native_plan(inline.plan, self.settings, self._native_ctx)
            if kernel is not None and one.request is not None:
                message, tallied = kernel.score_one(one.request, one.case, ctx, self.bounds_ms)
                counted = tally_from_counts(tallied) if tallied is not None else None
                return OneScored(message, tally=counted)
            result = score_case_sync(inline.plan, one.case(), ctx)
            return OneScored(self.score_response(inline, result), result)
        job = WorkerJob(
            key, source, Reply.SCORE, self.settings.check_timeout_s,
            cases=[one.case_bytes()], count=1,
        )  # fmt: skip
        scored = await self.run(job, ctx.deadline)
        result = unslim(scored.counts[0])
        info.compile_s = min(info.compile_s, scored.info.compile_s)  # a cold worker is slower
        self._learn(key, source, info, one.size, result, scored.cpu_s)
        return OneScored(scored.message, result)

    def score_response(self, compiled: CompiledPlan, result: CaseResult) -> pb.ScoreResponse:
        """The ScoreResponse of a case scored in this process."""
        response = pb.ScoreResponse(passed=result.passed)
        wire.add_scores(
            response.scores, compiled.plan.checks, result.scores, self.settings.max_reason_chars
        )
        return response

    def _inline(self, key: bytes, info: PlanInfo, size: int) -> CompiledPlan | None:
        """The local plan, when a case of `size` bytes with it is known to cost little."""
        if size > self.settings.inline_score_max_bytes or info.ms_per_kb is None:
            return None
        if info.ms_per_kb * max(size, 1024) / 1024 > INLINE_SCORE_MS:
            return None
        return self.here.get(key)

    def _learn(
        self,
        key: bytes,
        source: PlanSource,
        info: PlanInfo,
        size: int,
        result: CaseResult,
        cpu_s: float,
    ) -> None:
        """Record what a worker's case cost; compile cheap plans here for inline scoring.

        The estimate is the worst CPU time a worker spent on one such case, or the best
        wall time its checks took if that is more: CPU time, because on a busy machine a
        worker descheduled mid-check reports a long latency that says nothing about the
        plan (one such call used to keep a cheap plan off the inline path for good); and
        the best wall time too, so that a check that blocks without computing (a custom
        check sleeping or doing I/O) never runs on the event loop.
        """
        if size > self.settings.inline_score_max_bytes or info.compile_s > INLINE_COMPILE_S:
            return
        kib = max(size, 1024) / 1024
        info.cpu_ms_per_kb = max(info.cpu_ms_per_kb, cpu_s * 1000 / kib)
        wall_ms = sum(s.latency_ms for s in result.scores)
        info.wall_ms_per_kb = min(info.wall_ms_per_kb, wall_ms / kib)
        info.ms_per_kb = max(info.cpu_ms_per_kb, info.wall_ms_per_kb)
        if info.ms_per_kb > INLINE_SCORE_MS or key in self._compiling:
            return
        if self.here.get(key) is not None:
            return
        self._compiling.add(key)
        future = asyncio.get_running_loop().run_in_executor(
            self._thread, self._compile_here, key, source
        )

        def done(f: asyncio.Future[CompiledPlan]) -> None:
            self._compiling.discard(key)
            if not f.cancelled():
                f.exception()  # a plan that fails here is scored by the workers

        future.add_done_callback(done)

    # ---- a batch, its results in hand (online evaluation) -------------------------------

    async def score_results(
        self, key: bytes, source: PlanSource, cases: Sequence[bytes], ctx: CheckContext
    ) -> list[CaseResult]:
        """Score serialized `Case`s; their results in order, reasons included.

        By the module's rule for a batch: a plan that waits on I/O here, its cases
        concurrently (`max_concurrency`); any other in the workers, in chunks of at most
        `BATCH_MAX_RESULTS` (here when there are none). The jobs take the share of the
        current caller (`core.fairness.current_caller`)."""
        info = await self.info(key, source, ctx.deadline)
        if info.any_async or self.pool is None:
            plan = (await self.compiled_here(key, source)).plan
            todo = [wire.python_case(b, i) for i, b in enumerate(cases)]
            if not info.any_async:
                return [score_case_sync(plan, c, ctx) for c in todo]
            limit = self.settings.max_concurrency
            with tracing.span("scorewire.cases", {tracing.CASES: len(todo)}):
                out = [r async for r in run_cases(plan, todo, ctx, concurrency=limit)]
            return sorted(out, key=lambda r: r.index)
        timeout = self.settings.check_timeout_s
        chunks = [
            list(cases[at : at + BATCH_MAX_RESULTS])
            for at in range(0, len(cases), BATCH_MAX_RESULTS)
        ]
        jobs = [
            WorkerJob(
                key,
                source,
                Reply.RESULTS,
                timeout,
                cases=c,
                first=i * BATCH_MAX_RESULTS,
                count=len(c),
            )
            for i, c in enumerate(chunks)
        ]
        answers = await asyncio.gather(*(self.run(job, ctx.deadline) for job in jobs))
        return [r for answer in answers for r in answer.message]

    # ---- in process (no workers) -------------------------------------------------------

    def score_batch_here(
        self, plan: Plan, cases: Iterable[Any], case_of: Callable[[Any, int], Case],
        ctx: CheckContext,
    ) -> tuple[list[CaseResult], SummaryBuilder]:  # fmt: skip
        """Score a batch of a synchronous plan here, with no event loop: its results in
        order and their summary. `case_of(item, index)` makes an item's Case (the kernel
        reads plain case dicts itself)."""
        builder = SummaryBuilder(plan.names, [c.type for c in plan.checks])
        kernel = native_plan(plan, self.settings, ctx)
        if kernel is not None:
            results, counts = native.score_batch(kernel, cases, case_of)
            builder.add_counts(counts)
            return results, builder
        results = [score_case_sync(plan, case_of(c, i), ctx) for i, c in enumerate(cases)]
        for r in results:
            builder.add(r)
        return results, builder

    def cache_stats(self) -> list[tuple[int, int]]:
        """(estimated bytes, plans) of this process's plan cache and each worker's."""
        workers = self.pool.cache_stats() if self.pool is not None else []
        return [(self.here.bytes, len(self.here)), *workers]


def deadline_of(remaining: float | None) -> float | None:
    """The `time.monotonic()` deadline of a call with `remaining` seconds, or None."""
    return None if remaining is None else time.monotonic() + remaining
