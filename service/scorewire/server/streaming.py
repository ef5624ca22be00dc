"""Stream flow control for the scoring RPCs: batching, backpressure, concurrent streams.

The handlers in `service` convert and call; this module decides how results are grouped
into messages and how a slow reader slows its own stream instead of growing memory.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Protocol, TypeVar

from scorewire.core.context import CheckContext
from scorewire.core.errors import FieldViolation
from scorewire.core.model import ErrorCode, Score
from scorewire.engine.runner import (
    Case,
    CaseResult,
    Plan,
    PlanShape,
    score_case,
    score_case_sync,
)
from scorewire.engine.summary import SummaryBuilder
from scorewire.server import convert
from scorewire.server.errors import RequestRejected, invalid_argument
from scorewire.v1 import scoring_pb2 as pb

if TYPE_CHECKING:
    from scorewire.server.service import RunObserver

T = TypeVar("T")

BATCH_MAX_RESULTS = 256
"""Most case results in one RunSuite message."""
FLUSH_INTERVAL_S = 0.05
"""A finished result waits at most this long for others to share its message."""
MAX_BUFFERED_RESULTS = 4 * BATCH_MAX_RESULTS
"""Scoring pauses when this many results wait for a slow reader (backpressure)."""


OnResult = Callable[[pb.StreamCase, list[Score], pb.ScoreStreamResponse], Awaitable[None]]
"""Called with each streamed case's scores before its response is queued (recording)."""


class StreamHost(Protocol):
    """What a ScoreStream needs from its service: the per-case check and the observer."""

    @property
    def observer(self) -> RunObserver | None:
        """The metrics observer, if any."""

    @property
    def max_reason_chars(self) -> int:
        """The longest reason a response carries."""

    def check_stream_case(self, case: pb.StreamCase, plan: PlanShape) -> None:
        """Reject a streamed case over the output size limits."""


def to_case(source: Sequence[pb.Case] | Sequence[Case], i: int) -> Case:
    c = source[i]
    if isinstance(c, Case):
        return c
    return Case(convert.sample_from_pb(c.sample), convert.output_from_pb(c.output), i)


def results_message(
    plan: Plan, batch: Sequence[CaseResult], max_reason_chars: int
) -> pb.RunSuiteResponse:
    response = pb.RunSuiteResponse()
    convert.add_case_results(response.results.results, plan.checks, batch, max_reason_chars)
    return response


def score_chunk(
    plan: Plan,
    source: Sequence[pb.Case] | Sequence[Case],
    start: int,
    ctx: CheckContext,
    builder: SummaryBuilder,
    max_reason_chars: int,
) -> tuple[pb.RunSuiteResponse, list[CaseResult]]:
    """Convert, score and count one chunk of a deterministic plan (runs on the thread)."""
    end = min(start + BATCH_MAX_RESULTS, len(source))
    batch = [score_case_sync(plan, to_case(source, i), ctx) for i in range(start, end)]
    for r in batch:
        builder.add(r)
    return results_message(plan, batch, max_reason_chars), batch


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


def _invalid_case_scores(plan: PlanShape, message: str) -> list[Score]:
    return [Score.fail_with_error(ErrorCode.INVALID_INPUT, message) for _ in plan.checks]


async def stream_scores(
    plan: PlanShape,
    requests: AsyncIterator[pb.ScoreStreamRequest],
    ctx: CheckContext,
    concurrency: int,
    service: StreamHost,
    *,
    score: Callable[[pb.StreamCase], Awaitable[CaseResult]] | None = None,
    on_result: OnResult | None = None,
) -> AsyncIterator[pb.ScoreStreamResponse]:
    """Score streamed cases concurrently (bounded); yield responses as they finish.

    At most `concurrency` responses wait for the reader: a finished case holds its slot
    until its response is queued, so a slow reader stops new cases being read, and gRPC
    flow control then slows the sender. Memory is bounded by the stream, not its length.

    `score` scores one case elsewhere (a scoring worker); without it `plan` must be a
    compiled Plan, scored here. `on_result` runs before each response is queued; when it
    raises RequestRejected (the run store failed), the stream ends with that error.
    """
    # One slot for the end marker, so the reader never waits to say it is done.
    out: asyncio.Queue[pb.ScoreStreamResponse | RequestRejected | None] = asyncio.Queue(
        maxsize=concurrency + 1
    )
    slots = asyncio.Semaphore(concurrency)
    tasks: set[asyncio.Task[None]] = set()

    async def score_one(req: pb.StreamCase) -> None:
        try:
            try:
                service.check_stream_case(req, plan)
            except RequestRejected as err:
                scores = _invalid_case_scores(plan, err.message)
                passed = False
            else:
                if score is not None:
                    result = await score(req)
                else:
                    assert isinstance(plan, Plan)
                    case = Case(
                        convert.sample_from_pb(req.sample), convert.output_from_pb(req.output)
                    )
                    result = await score_case(plan, case, ctx)
                scores, passed = result.scores, result.passed
                if service.observer is not None:
                    service.observer.observe_results(plan, (result,))
            response = pb.ScoreStreamResponse(
                request_id=req.request_id,
                scores=convert.scores_to_pb(
                    plan.checks, scores, max_reason_chars=service.max_reason_chars
                ),
                passed=passed,
            )
            if on_result is not None:
                try:
                    await on_result(req, list(scores), response)
                except RequestRejected as err:
                    await out.put(err)
                    return
            await out.put(response)
        finally:
            slots.release()

    async def read() -> None:
        try:
            async for msg in requests:
                if msg.WhichOneof("message") != "case":
                    raise invalid_argument(
                        [FieldViolation("config", "config is allowed only in the first message")]
                    )
                await slots.acquire()
                t = asyncio.create_task(score_one(msg.case))
                tasks.add(t)
                t.add_done_callback(tasks.discard)
            while tasks:
                await asyncio.gather(*list(tasks), return_exceptions=True)
        finally:
            await out.put(None)

    reader = asyncio.create_task(read())
    try:
        while True:
            item = await out.get()
            if item is None:
                break
            if isinstance(item, RequestRejected):
                raise item
            yield item
        await reader  # re-raise a protocol error from the reader
    finally:
        for t in (reader, *tasks):
            t.cancel()
        await asyncio.gather(reader, *tasks, return_exceptions=True)
