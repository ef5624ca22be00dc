"""ScoreStream: cases scored as they arrive, a bounded number at once, each answered.

A slow reader slows its own stream instead of growing memory: a finished case holds its
slot until its response is queued, so new cases are not read, and gRPC flow control then
slows the sender. A recorded stream stores each case before its response is sent.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, Protocol

from scorewire.core.context import CheckContext
from scorewire.core.errors import FieldViolation
from scorewire.core.model import ErrorCode, Score
from scorewire.engine.runner import Case, CaseResult, Plan, PlanShape, score_case
from scorewire.engine.summary import SummaryBuilder
from scorewire.runs import RunsUnavailable
from scorewire.scoring import wire
from scorewire.scoring.executor import DeadlineExpired, Executor
from scorewire.scoring.plan_source import PlanSource
from scorewire.scoring.plans import PlanInfo
from scorewire.scoring.protocol import Reply, WorkerJob
from scorewire.scoring.recorded import cases_blob
from scorewire.scoring.recording import Recording
from scorewire.server.observer import RunObserver
from scorewire.server.status import RequestRejected, invalid_argument, unavailable
from scorewire.server.suite_runs import RequestChecks
from scorewire.settings import Settings
from scorewire.v1 import scoring_pb2 as pb

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
                    case = Case(wire.sample_from_pb(req.sample), wire.output_from_pb(req.output))
                    result = await score_case(plan, case, ctx)
                scores, passed = result.scores, result.passed
                if service.observer is not None:
                    service.observer.observe_results(plan, (result,))
            response = pb.ScoreStreamResponse(
                request_id=req.request_id,
                scores=wire.scores_to_pb(
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


class ScoreStreams:
    """ScoreStream calls, once their plan is known: each case scored where the executor's
    rule says (in this process for a plan that waits on I/O, else in the workers)."""

    def __init__(
        self, settings: Settings, executor: Executor, cases: RequestChecks, observer: Any
    ) -> None:
        self._settings = settings
        self._executor = executor
        self._cases = cases
        self._observer = observer

    @property
    def observer(self) -> RunObserver | None:
        """The metrics observer, if any."""
        return self._observer  # type: ignore[no-any-return]

    @property
    def max_reason_chars(self) -> int:
        """The longest reason a response carries (`max_reason_chars`)."""
        return self._settings.max_reason_chars

    def check_stream_case(self, case: pb.StreamCase, plan: PlanShape) -> None:
        """Reject a streamed case over the output size limits or with bad JSON fields."""
        self._cases.output(case.output.text, "case.output", plan.whole_text_caps)
        self._cases.json_fields(case.sample, case.output, "case")

    async def run(
        self,
        key: bytes,
        source: PlanSource,
        info: PlanInfo,
        ctx: CheckContext,
        requests: AsyncIterator[pb.ScoreStreamRequest],
        recording: Recording | None,
    ) -> AsyncIterator[pb.ScoreStreamResponse]:
        """Score and answer each case of the stream; a recorded one is completed at the end."""
        builder = SummaryBuilder(info.names, info.types)
        on_result = _recorder(recording, builder) if recording is not None else None
        try:
            async for resp in self._scores(key, source, info, ctx, requests, on_result):
                yield resp
            if recording is not None:
                await recording.complete(builder.finish())
        finally:
            if recording is not None:
                recording.abandon()

    async def _scores(
        self,
        key: bytes,
        source: PlanSource,
        info: PlanInfo,
        ctx: CheckContext,
        requests: AsyncIterator[pb.ScoreStreamRequest],
        on_result: OnResult | None,
    ) -> AsyncIterator[pb.ScoreStreamResponse]:
        if info.any_async:
            compiled = await self._executor.compiled_here(key, source)
            stream = stream_scores(
                compiled.plan, requests, ctx, self._settings.max_concurrency, self,
                on_result=on_result,
            )  # fmt: skip
        else:
            timeout = self._settings.check_timeout_s

            async def score(case: pb.StreamCase) -> CaseResult:
                one = wire.case_bytes(case.sample, case.output)
                job = WorkerJob(key, source, Reply.RESULTS, timeout, cases=[one], count=1)
                try:
                    answer = await self._executor.run(job, ctx.deadline)
                except DeadlineExpired as err:
                    # Every streamed case gets an answer: the deadline passed while it ran.
                    error = Score.fail_with_error(ErrorCode.DEADLINE_EXCEEDED, str(err))
                    return CaseResult(0, case.sample.id, [error for _ in info.checks])
                return answer.message[0]  # type: ignore[no-any-return]

            concurrency = min(self._settings.max_concurrency, self._executor.share)
            stream = stream_scores(
                info, requests, ctx, concurrency, self, score=score, on_result=on_result
            )
        async for resp in stream:
            yield resp


def _recorder(recording: Recording, builder: SummaryBuilder) -> OnResult:
    """Store each streamed case (and count it) before its response is sent."""
    seen = 0

    async def on_result(
        case: pb.StreamCase, scores: list[Score], response: pb.ScoreStreamResponse
    ) -> None:
        nonlocal seen
        index, seen = seen, seen + 1
        builder.add(CaseResult(index, case.sample.id, scores))
        result = pb.CaseResult(
            index=index, sample_id=case.sample.id, scores=response.scores, passed=response.passed
        )
        results = pb.RunSuiteResponse(results=pb.CaseResultBatch(results=[result]))
        blob = cases_blob([wire.case_bytes(case.sample, case.output)])
        try:
            await recording.append(blob, results.SerializeToString(), 1)
        except RunsUnavailable as err:
            raise unavailable(err) from None  # ends the stream with the store's status

    return on_result
