"""A RunSuite's chunks in the scoring workers: checked, sent on at once, answered in order.

The handler checks every case (output sizes, JSON text) before it answers anything; the
first problem is the call's error, as if no case had been scored. Checking all 20,000
cases of a big run takes about as long as scoring a tenth of them, so rather than leave
the workers idle meanwhile, each chunk goes to them as soon as its own cases have passed.
Scoring has no effect outside the worker, so a chunk scored for a call that then fails
is only work thrown away (at most `share` chunks: later ones are not sent).

Chunks run `share` at a time; the next one is sent the moment one finishes (from the
task's completion callback), not when the reader has taken the oldest answer, so a worker
does not wait for the stream. Answers are yielded in chunk order; at most `buffered`
chunks are sent but not yet yielded, which bounds the memory a slow reader can hold.
"""

from __future__ import annotations

import asyncio
import collections
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Sequence
from dataclasses import dataclass

from scorewire.scoring.plan_source import PlanSource
from scorewire.scoring.protocol import ChunkCounts, Reply, Scored, WorkerJob

BATCH_MAX_RESULTS = 256
"""Most case results in one RunSuite message (and one chunk job)."""
CHUNK_MAX_BYTES = 1 << 20
"""A chunk of cases sent to a scoring worker closes at this many serialized bytes."""
CHUNKS_BUFFERED = 4
"""Chunks of one RunSuite sent to the workers but not yet answered, as a multiple of the
chunks it may have in the workers at once: how far scoring runs ahead of a slow reader."""

_DETACHED: set[asyncio.Task[Scored]] = set()
"""Chunks left to finish after their call failed (asyncio keeps only weak references)."""


@dataclass(slots=True)
class ScoredBatch:
    """A batch of a RunSuite, scored: what is sent, counted and recorded of it."""

    message: bytes
    """The serialized `RunSuiteResponse` of its results."""
    counts: ChunkCounts
    """Its part of the summary, and of the metrics."""
    cases: Sequence[bytes]
    """The serialized cases as sent (what is recorded), in result order; empty for a
    suite document's own cases."""
    count: int


CaseCheck = Callable[[bytes, int], object]
"""Checks a case's bytes (`check(data, index)`), raising its first problem."""


class ChunkCutter:
    """Cuts consecutive cases into chunk jobs of at most BATCH_MAX_RESULTS cases (or
    CHUNK_MAX_BYTES of them), checking each case (`check(data, index)`) first."""

    def __init__(
        self, make: Callable[[list[bytes], int, int], WorkerJob], check: CaseCheck
    ) -> None:
        self._make, self._check = make, check
        self._start = self._next = self._size = 0
        self._chunk: list[bytes] = []

    def add(self, case: memoryview | bytes) -> WorkerJob | None:
        """Take the next case (its bytes as sent); the job it completes, if any."""
        data = bytes(case)
        self._check(data, self._next)
        self._next += 1
        self._chunk.append(data)
        self._size += len(data)
        if len(self._chunk) >= BATCH_MAX_RESULTS or self._size >= CHUNK_MAX_BYTES:
            return self.rest()
        return None

    def rest(self) -> WorkerJob | None:
        """The job of the cases taken since the last one, if any."""
        if not self._chunk:
            return None
        job = self._make(self._chunk, self._start, len(self._chunk))
        self._start, self._chunk, self._size = self._next, [], 0
        return job


def chunk_jobs(
    make: Callable[[list[bytes] | None, int, int], WorkerJob],
    cases: Sequence[memoryview | bytes] | None,
    own_cases: int,
    check: CaseCheck,
) -> Iterator[WorkerJob]:
    """The jobs of a batch: `cases` cut and checked, or with None the suite document's
    `own_cases`, which the workers hold."""
    if cases is None:
        for start in range(0, own_cases, BATCH_MAX_RESULTS):
            yield make(None, start, min(BATCH_MAX_RESULTS, own_cases - start))
        return
    cut = ChunkCutter(make, check)
    for c in cases:
        if (done := cut.add(c)) is not None:
            yield done
    if (done := cut.rest()) is not None:
        yield done


async def streamed_jobs(
    make: Callable[[list[bytes], int, int], WorkerJob],
    arriving: AsyncIterator[Sequence[memoryview | bytes]],
    check: CaseCheck,
) -> AsyncIterator[WorkerJob]:
    """`chunk_jobs` of a stream's cases as their chunks arrive: cut as a RunSuite's are,
    whatever the chunks, so indexes and results are the same."""
    cut = ChunkCutter(make, check)
    async for cases in arriving:
        for c in cases:
            if (done := cut.add(c)) is not None:
                yield done
    if (done := cut.rest()) is not None:
        yield done


def job_maker(
    key: bytes, source: PlanSource, timeout_s: float, bounds_ms: tuple[float, ...] | None
) -> Callable[[list[bytes] | None, int, int], WorkerJob]:
    """Makes the `RUN` job of a chunk of cases (`cases`, batch index of the first, count)."""

    def job(cases: list[bytes] | None, first: int, count: int) -> WorkerJob:
        return WorkerJob(
            key, source, Reply.RUN, timeout_s,
            cases=cases, first=first, count=count, bounds_ms=bounds_ms,
        )  # fmt: skip

    return job


class ChunkRun:
    """The chunk jobs of one RunSuite; `check()`, then `answers()`, and `close()` always."""

    def __init__(
        self,
        jobs: Iterator[WorkerJob] | AsyncIterator[WorkerJob],
        run: Callable[[WorkerJob], Awaitable[Scored]],
        share: int,
        buffered: int,
    ) -> None:
        """`jobs` checks each chunk's cases as it makes its job (raising the first
        problem), from the request or as a stream brings them; `run` scores a job in the
        workers; `share` chunks run at once."""
        self._jobs = jobs
        self._run = run
        self._share = share
        self._buffered = max(share, buffered)
        self._ready: collections.deque[WorkerJob] = collections.deque()
        self._order: collections.deque[tuple[WorkerJob, asyncio.Task[Scored]]] = collections.deque()
        self._running = 0
        self._closed = False

    async def check(self) -> None:
        """Make every job (so check every case), sending each to the workers at once.

        Yields to the event loop between chunks, so that other calls, and the answers of
        the chunks already sent, go on meanwhile.
        """
        if isinstance(self._jobs, AsyncIterator):  # waiting for the stream yields already
            async for job in self._jobs:
                self._ready.append(job)
                self._top_up()
            return
        for job in self._jobs:
            self._ready.append(job)
            self._top_up()
            await asyncio.sleep(0)

    def _top_up(self) -> None:
        while (
            self._ready
            and not self._closed
            and self._running < self._share
            and len(self._order) < self._buffered
        ):
            job = self._ready.popleft()
            task = asyncio.ensure_future(self._run(job))
            self._running += 1
            task.add_done_callback(self._finished)
            self._order.append((job, task))

    def _finished(self, task: asyncio.Task[Scored]) -> None:
        self._running -= 1
        self._top_up()

    async def batches(self) -> AsyncIterator[ScoredBatch]:
        """Each chunk's answer, in chunk order (after `check()`)."""
        while self._order:
            job, task = self._order[0]
            answer = await asyncio.shield(task)
            self._order.popleft()
            self._top_up()
            yield ScoredBatch(answer.message, answer.counts, job.cases or (), job.count)

    async def close(self, *, detach: bool = False) -> None:
        """Stop sending chunks. Unfinished ones are cancelled (which stops the worker
        running one), or with `detach` left to finish unread: a call refused before
        any answer need not cost a worker."""
        self._closed = True
        self._ready.clear()
        tasks = [t for _, t in self._order if not t.done()]
        for _, t in self._order:
            if t.done() and not t.cancelled():
                t.exception()  # retrieved: an answer nobody reads is not an error
        self._order.clear()
        if detach:
            for t in tasks:
                _DETACHED.add(t)
                t.add_done_callback(_forget)
            return
        for t in tasks:
            t.cancel()
        if tasks:
            await asyncio.gather(*tasks, return_exceptions=True)


def _forget(task: asyncio.Task[Scored]) -> None:
    _DETACHED.discard(task)
    if not task.cancelled():
        task.exception()
