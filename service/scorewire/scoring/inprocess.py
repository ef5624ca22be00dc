"""A batch whose plan the serving process scores itself: checks that wait on I/O.

Judge calls, embedding calls and custom coroutines wait rather than compute, so their
plans run on the event loop, cases concurrently (`engine.runner.run_cases`). Results are
grouped into messages as they finish (`batched`) and answered as `ScoredBatch`es, as the
workers' chunks are, so a RunSuite has one way to send, count and record its results.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Sequence
from typing import TypeVar

from scorewire.core import tracing
from scorewire.core.context import CheckContext
from scorewire.engine.runner import Case, Plan, run_cases
from scorewire.engine.summary import SummaryBuilder
from scorewire.metrics.runs import tally
from scorewire.scoring import wire
from scorewire.scoring.chunks import BATCH_MAX_RESULTS, ScoredBatch
from scorewire.scoring.protocol import ChunkCounts
from scorewire.v1 import scoring_pb2 as pb

T = TypeVar("T")

FLUSH_INTERVAL_S = 0.05
"""A finished result waits at most this long for others to share its message."""
MAX_BUFFERED_RESULTS = 4 * BATCH_MAX_RESULTS
"""Scoring pauses when this many results wait for a slow reader (backpressure)."""


async def batched(results: AsyncIterator[T]) -> AsyncIterator[list[T]]:
    """Group results into batches: full at BATCH_MAX_RESULTS, or after FLUSH_INTERVAL_S.

    A producer task fills a bounded buffer; when the reader is slow the producer waits,
    so memory stays bounded instead of growing with the run.
    """
    buffer: list[T] = []
    have_results = asyncio.Event()
    has_room = asyncio.Event()
    has_room.set()
    done = False

    async def produce() -> None:
        nonlocal done
        try:
            async for r in results:
                buffer.append(r)
                have_results.set()
                if len(buffer) >= MAX_BUFFERED_RESULTS:
                    has_room.clear()
                    await has_room.wait()
        finally:
            done = True
            have_results.set()

    task = asyncio.create_task(produce())
    try:
        while True:
            if not buffer and not done:
                have_results.clear()
                await have_results.wait()
            # Give other results a moment to join this message.
            window_end = time.monotonic() + FLUSH_INTERVAL_S
            while not done and len(buffer) < BATCH_MAX_RESULTS:
                left = window_end - time.monotonic()
                if left <= 0:
                    break
                have_results.clear()
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(have_results.wait(), left)
            if buffer:
                batch = buffer[:BATCH_MAX_RESULTS]
                del buffer[:BATCH_MAX_RESULTS]
                has_room.set()
                yield batch
            elif done:
                break
        await task  # re-raises a fault of the producer
    finally:
        if not task.done():
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        with contextlib.suppress(Exception):
            await results.aclose()  # type: ignore[attr-defined]


class LocalRun:
    """The cases of one RunSuite scored in this process, in batches as they finish."""

    def __init__(
        self,
        plan: Plan,
        cases: Sequence[pb.Case] | None,
        sent: Sequence[memoryview | bytes],
        own: Sequence[Case],
        ctx: CheckContext,
        *,
        concurrency: int,
        max_reason_chars: int,
        bounds_ms: tuple[float, ...] | None,
        first: int = 0,
    ) -> None:
        """`cases` as the request sent them (`sent`: their bytes), or None for the suite
        document's `own`; `first`: the batch index of `cases[0]` (a job's later chunk)."""
        self._plan = plan
        self._cases = cases
        self._sent = sent
        self._own = own
        self._ctx = ctx
        self._concurrency = concurrency
        self._cap = max_reason_chars
        self._bounds = bounds_ms
        self._first = first

    def _engine_cases(self) -> list[Case]:
        if self._cases is None:
            return list(self._own)
        return [
            Case(wire.sample_from_pb(c.sample), wire.output_from_pb(c.output), i)
            for i, c in enumerate(self._cases, self._first)
        ]

    async def batches(self) -> AsyncIterator[ScoredBatch]:
        """The results in batches, in the order they finish."""
        plan, names = self._plan, self._plan.names
        types = [c.type for c in plan.checks]
        cases = self._engine_cases()
        results = run_cases(plan, cases, self._ctx, concurrency=self._concurrency)
        # Not made current: this generator's steps are not one context's.
        span = tracing.start_span("scorewire.cases", {tracing.CASES: len(cases)})
        try:
            async for batch in batched(results):
                summary = SummaryBuilder(names, types)
                for r in batch:
                    summary.add(r)
                counted = tally(len(plan.checks), batch, self._bounds) if self._bounds else None
                message = wire.case_results_message(plan.checks, batch, self._cap)
                sent = self._sent if self._cases is not None else ()
                blobs = [bytes(sent[r.index - self._first]) for r in batch] if sent else []
                yield ScoredBatch(message, ChunkCounts(summary, counted), blobs, len(batch))
        finally:
            span.end()
