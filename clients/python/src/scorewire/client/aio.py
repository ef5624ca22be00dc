"""The asyncio client: `AsyncClient` and the `AsyncSuiteRun` of a RunSuite call."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterable, AsyncIterator, Iterable, Mapping, Sequence
from types import TracebackType
from typing import Any

import grpc
import grpc.aio
from scorewire.client import _channel, _convert, _labels, _shards
from scorewire.client._convert import (
    CaseLike,
    CheckLike,
    GateLike,
    OutputLike,
    SampleLike,
    StreamCaseLike,
)
from scorewire.client._jobs import AsyncJobCalls
from scorewire.client._labels import LabelLike
from scorewire.client._observe_aio import AsyncObserver
from scorewire.client._run_calls import DEFAULT, AsyncRunCalls, Metadata
from scorewire.client.errors import ScorewireError
from scorewire.v1 import labels_pb2 as lpb
from scorewire.v1 import scoring_pb2 as pb


class AsyncClient(AsyncRunCalls, AsyncJobCalls):
    """An asyncio scorewire client over one `grpc.aio` channel.

    The same defaults and calls as `Client`, awaited: `target` is `host:port` (DNS,
    round-robin), a target with a scheme, or a list of `ip:port` replica addresses;
    calls time out after `timeout` seconds unless given their own, except ScoreStream;
    failures raise `ScorewireError`. Use
    `async with`, or `await close()`. Create it inside the event loop that uses it.
    """

    def __init__(
        self,
        target: str | Sequence[str] = "localhost:50051",
        *,
        credentials: grpc.ChannelCredentials | None = None,
        timeout: float | None = _channel.DEFAULT_TIMEOUT_S,
        keepalive_s: float = _channel.DEFAULT_KEEPALIVE_S,
        keepalive_timeout_s: float = _channel.DEFAULT_KEEPALIVE_TIMEOUT_S,
        options: Sequence[tuple[str, Any]] = (),
        metadata: Metadata = (),
        channel: grpc.aio.Channel | None = None,
    ) -> None:
        if channel is None:
            target = _channel.normalize_target(target)
            opts = _channel.channel_options(keepalive_s, keepalive_timeout_s, options)
            if credentials is None:
                channel = grpc.aio.insecure_channel(target, options=opts)
            else:
                channel = grpc.aio.secure_channel(target, credentials, options=opts)
        self._channel = channel
        self._stub = _channel.stub(channel)
        self._labels = _channel.label_stub(channel)
        self._runs = _channel.run_stub(channel)
        self._jobs = _channel.job_stub(channel)
        self._timeout = timeout
        self._metadata = tuple(metadata)

    @property
    def channel(self) -> grpc.aio.Channel:
        """The underlying gRPC channel."""
        return self._channel

    async def close(self) -> None:
        """Close the channel; open calls are cancelled."""
        await self._channel.close(None)

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()

    def observer(
        self,
        *,
        buffer_size: int = 10_000,
        batch_size: int = 500,
        flush_interval_s: float = 1.0,
        call_timeout_s: float = 5.0,
        max_attempts: int = 5,
        initial_backoff_s: float = 0.1,
        max_backoff_s: float = 5.0,
    ) -> AsyncObserver:
        """An `AsyncObserver` sending production outputs to ObserveService over this
        channel from a task on the running event loop (call it inside the loop): the
        options, defaults and rules of `Client.observer`. Close it before the client."""
        return AsyncObserver(
            self._channel,
            metadata=self._metadata,
            buffer_size=buffer_size,
            batch_size=batch_size,
            flush_interval_s=flush_interval_s,
            call_timeout_s=call_timeout_s,
            max_attempts=max_attempts,
            initial_backoff_s=initial_backoff_s,
            max_backoff_s=max_backoff_s,
        )

    def _call_args(self, timeout: float | None, metadata: Metadata | None) -> dict[str, Any]:
        return {
            "timeout": self._timeout if timeout is DEFAULT else timeout,
            "metadata": self._metadata + tuple(metadata or ()) + _channel.trace_metadata(),
        }

    async def score(
        self,
        output: OutputLike,
        *,
        sample: SampleLike = None,
        checks: Iterable[CheckLike] | None = None,
        compact: Iterable[str] | None = None,
        budget_usd: float | None = None,
        fresh_judges: bool | None = None,
        timeout: float | None = DEFAULT,  # noqa: ASYNC109 (a gRPC deadline)
        metadata: Metadata | None = None,
    ) -> pb.ScoreResponse:
        """Score one output; see `Client.score`."""
        req = _convert.score_request(
            output=output,
            sample=sample,
            checks=checks,
            compact=compact,
            budget_usd=budget_usd,
            fresh_judges=fresh_judges,
        )
        try:
            resp: pb.ScoreResponse = await self._stub.Score(
                req, **self._call_args(timeout, metadata)
            )
        except grpc.RpcError as err:
            raise ScorewireError.from_rpc_error(err) from None
        return resp

    def run_suite(
        self,
        cases: Iterable[CaseLike],
        *,
        suite_yaml: str = "",
        suite_name: str = "",
        checks: Iterable[CheckLike] | None = None,
        compact: Iterable[str] | None = None,
        gate: GateLike = None,
        budget_usd: float | None = None,
        record: bool | None = None,
        run_name: str = "",
        labels: Mapping[str, str] | None = None,
        fresh_judges: bool | None = None,
        timeout: float | None = DEFAULT,
        metadata: Metadata | None = None,
        shards: int | None = None,
        chunk_cases: int = _shards.DEFAULT_CHUNK_CASES,
        chunk_attempts: int = _shards.DEFAULT_CHUNK_ATTEMPTS,
        part: _convert.PartLike = None,
    ) -> AsyncSuiteRun | _shards.AsyncShardedRun:
        """Run a suite over `cases`; `async for` the returned run, then read `summary`.
        With `shards=N`, one batch over several replicas (an AsyncShardedRun). See
        `Client.run_suite`. A batch of more than 500 cases goes as a RunSuiteStream whose
        chunks are built as the call sends them (the event loop runs between chunks); a
        case that cannot be converted then raises from the iteration, as in
        `score_stream`, and the call is cancelled. `part` as in `Client.run_suite`."""
        if part is not None and shards is not None:
            raise ValueError("part and shards: a sharded run sends its own parts")
        args = self._call_args(timeout, metadata)
        run = _convert.SuiteFields(
            suite_yaml, suite_name, checks, compact, gate, budget_usd, record, run_name, labels,
            part, fresh_judges,
        )  # fmt: skip
        if shards is None:
            listed = cases if isinstance(cases, Sequence) else list(cases)
            if len(listed) > _convert.STREAM_CHUNK_CASES:
                streamed = _AsyncSuiteChunks(run.request(()), listed)
                call = self._stub.RunSuiteStream(streamed.messages(), **args)
                return AsyncSuiteRun(call, streamed)
            cases = listed
        req = run.request(cases)
        if shards is None:
            return AsyncSuiteRun(self._stub.RunSuite(req, **args))
        chunks = _shards.split(req, list(req.cases), shards, chunk_cases)
        parts = None
        if _shards.one_recorded_run(req, chunks):

            async def open_run() -> str:
                return await self.open_run(
                    run_name=run_name, labels=labels, suite=suite_yaml, record=True,
                    timeout=timeout, metadata=metadata,
                )  # fmt: skip

            async def close(summary: pb.RunSummary | None) -> None:
                run_id = chunks[0].request.part.run_id  # set by as_parts once opened
                await self.close_run(run_id, summary, timeout=timeout, metadata=metadata)

            parts = (open_run, close)
        return _shards.AsyncShardedRun(
            lambda chunk: AsyncSuiteRun(self._stub.RunSuite(chunk, **args)),
            chunks,
            shards,
            chunk_attempts,
            parts,
        )

    async def score_stream(
        self,
        cases: Iterable[StreamCaseLike] | AsyncIterable[StreamCaseLike],
        *,
        suite_yaml: str = "",
        suite_name: str = "",
        checks: Iterable[CheckLike] | None = None,
        compact: Iterable[str] | None = None,
        budget_usd: float | None = None,
        record: bool | None = None,
        run_name: str = "",
        labels: Mapping[str, str] | None = None,
        fresh_judges: bool | None = None,
        timeout: float | None = None,  # noqa: ASYNC109 (a gRPC deadline)
        metadata: Metadata | None = None,
    ) -> AsyncIterator[pb.ScoreStreamResponse]:
        """Score `cases` (a sync or async iterable) as they are produced; yields one
        response per case in completion order. See `Client.score_stream`."""
        config = _convert.stream_config(
            suite_yaml=suite_yaml,
            suite_name=suite_name,
            checks=checks,
            compact=compact,
            budget_usd=budget_usd,
            record=record,
            run_name=run_name,
            labels=labels,
            fresh_judges=fresh_judges,
        )
        requests = _AsyncRequestStream(config, cases)
        call = self._stub.ScoreStream(requests.messages(), **self._call_args(timeout, metadata))
        try:
            async for resp in call:
                yield resp
            if requests.error is not None:
                raise requests.error
        except asyncio.CancelledError:
            # grpc.aio cancels a call whose request iterator raised: report that error,
            # not a cancellation the caller never asked for
            if requests.error is None:
                raise
            raise requests.error from None
        except grpc.RpcError as err:
            if requests.error is not None:
                raise requests.error from None
            raise ScorewireError.from_rpc_error(_settled(call, err)) from None
        finally:
            call.cancel()  # a no-op once the call is over; stops it if the caller left early

    async def list_checks(
        self,
        *,
        timeout: float | None = DEFAULT,  # noqa: ASYNC109 (a gRPC deadline)
        metadata: Metadata | None = None,
    ) -> pb.ListChecksResponse:
        """The server's catalog of check types with their parameter schemas."""
        try:
            resp: pb.ListChecksResponse = await self._stub.ListChecks(
                pb.ListChecksRequest(), **self._call_args(timeout, metadata)
            )
        except grpc.RpcError as err:
            raise ScorewireError.from_rpc_error(err) from None
        return resp

    async def validate_suite(
        self,
        *,
        suite_yaml: str = "",
        suite_name: str = "",
        checks: Iterable[CheckLike] | None = None,
        compact: Iterable[str] | None = None,
        offline: bool = False,
        timeout: float | None = DEFAULT,  # noqa: ASYNC109 (a gRPC deadline)
        metadata: Metadata | None = None,
    ) -> pb.ValidateSuiteResponse:
        """Every problem of a suite without running it; see `Client.validate_suite`."""
        req = pb.ValidateSuiteRequest(
            suite_yaml=suite_yaml,
            suite_name=suite_name,
            checks=_convert.to_checks(checks),
            compact=list(compact or ()),
            offline=offline,
        )
        try:
            resp: pb.ValidateSuiteResponse = await self._stub.ValidateSuite(
                req, **self._call_args(timeout, metadata)
            )
        except grpc.RpcError as err:
            raise ScorewireError.from_rpc_error(err) from None
        return resp

    async def put_labels(
        self,
        labels: Iterable[LabelLike],
        *,
        request_id: str | None = None,
        timeout: float | None = DEFAULT,  # noqa: ASYNC109 (a gRPC deadline)
        metadata: Metadata | None = None,
    ) -> lpb.PutLabelsResponse:
        """Store human labels, all or none; returns them as stored.

        Each label is a Label or a mapping of its fields, where `output` (the output's
        text) may stand in for `output_hash`. `request_id` makes a retry safe: None (the
        default) is a fresh id for this call, which gRPC's own retry on UNAVAILABLE
        reuses; give your own to retry the call yourself.
        """
        req = _labels.put_request(labels, request_id)
        try:
            resp: lpb.PutLabelsResponse = await self._labels.PutLabels(
                req, **self._call_args(timeout, metadata)
            )
        except grpc.RpcError as err:
            raise ScorewireError.from_rpc_error(err) from None
        return resp

    async def list_labels(
        self,
        *,
        sample_id: str = "",
        output_hash: str = "",
        check: str = "",
        labeller: str = "",
        tenant: str = "",
        include_history: bool = False,
        page_size: int = 0,
        page_token: str = "",
        timeout: float | None = DEFAULT,  # noqa: ASYNC109 (a gRPC deadline)
        metadata: Metadata | None = None,
    ) -> lpb.ListLabelsResponse:
        """One page of the labels matching every filter given (oldest stored first);
        pass its `next_page_token` as `page_token` for the next page."""
        req = _labels.list_request(
            sample_id=sample_id,
            output_hash=output_hash,
            check=check,
            labeller=labeller,
            tenant=tenant,
            include_history=include_history,
            page_size=page_size,
            page_token=page_token,
        )
        try:
            resp: lpb.ListLabelsResponse = await self._labels.ListLabels(
                req, **self._call_args(timeout, metadata)
            )
        except grpc.RpcError as err:
            raise ScorewireError.from_rpc_error(err) from None
        return resp

    async def agreement(
        self,
        cases: Iterable[CaseLike],
        checks: Iterable[CheckLike],
        *,
        check: str = "",
        label_check: str = "",
        labeller: str = "",
        tenant: str = "",
        resamples: int = 0,
        seed: int = 0,
        confidence: float = 0.0,
        max_disagreements: int = 0,
        budget_usd: float | None = None,
        timeout: float | None = DEFAULT,  # noqa: ASYNC109 (a gRPC deadline)
        metadata: Metadata | None = None,
    ) -> lpb.AgreementResponse:
        """Score `cases` with `checks` now and compare each judge-backed check with the
        human labels of the same samples and exact outputs: pairs, accuracy, Cohen's
        kappa and its bootstrap interval, the confusion matrix, the disagreements. Zero
        pairs raises ScorewireError with FAILED_PRECONDITION (never a kappa of 0)."""
        req = _labels.agreement_request(
            cases,
            checks,
            check=check,
            label_check=label_check,
            labeller=labeller,
            tenant=tenant,
            resamples=resamples,
            seed=seed,
            confidence=confidence,
            max_disagreements=max_disagreements,
            budget_usd=budget_usd,
        )
        try:
            resp: lpb.AgreementResponse = await self._labels.Agreement(
                req, **self._call_args(timeout, metadata)
            )
        except grpc.RpcError as err:
            raise ScorewireError.from_rpc_error(err) from None
        return resp

    async def calibrate(
        self,
        cases: Iterable[CaseLike],
        checks: Iterable[CheckLike],
        *,
        thresholds: Iterable[float] = (),
        check: str = "",
        label_check: str = "",
        labeller: str = "",
        tenant: str = "",
        budget_usd: float | None = None,
        timeout: float | None = DEFAULT,  # noqa: ASYNC109 (a gRPC deadline)
        metadata: Metadata | None = None,
    ) -> lpb.CalibrateResponse:
        """Score once, then the agreement with the labels at each candidate threshold
        (default: every value the judge gave) and the one with the highest kappa."""
        req = lpb.CalibrateRequest(
            agreement=_labels.agreement_request(
                cases,
                checks,
                check=check,
                label_check=label_check,
                labeller=labeller,
                tenant=tenant,
                resamples=0,
                seed=0,
                confidence=0.0,
                max_disagreements=0,
                budget_usd=budget_usd,
            ),
            thresholds=list(thresholds),
        )
        try:
            resp: lpb.CalibrateResponse = await self._labels.Calibrate(
                req, **self._call_args(timeout, metadata)
            )
        except grpc.RpcError as err:
            raise ScorewireError.from_rpc_error(err) from None
        return resp


class AsyncSuiteRun(AsyncIterator[pb.CaseResult]):
    """The results of a RunSuite call for `async for`, one CaseResult per case in
    completion order; `summary` is set after the last. Failures raise ScorewireError."""

    def __init__(self, call: Any, chunks: _AsyncSuiteChunks | None = None) -> None:
        self._call = call
        self._chunks = chunks
        self._events: AsyncIterator[pb.RunSuiteResponse] = call.__aiter__()
        self._batch: list[pb.CaseResult] = []
        self._pos = 0
        self._summary: pb.RunSummary | None = None
        self._done = False

    def __aiter__(self) -> AsyncSuiteRun:
        return self

    async def __anext__(self) -> pb.CaseResult:
        while True:
            if self._pos < len(self._batch):
                self._pos += 1
                return self._batch[self._pos - 1]
            if self._done:
                raise StopAsyncIteration
            event = await self._next_event()
            if event is None:
                self._done = True
                if self._summary is None:
                    raise ScorewireError(
                        grpc.StatusCode.INTERNAL, "RunSuite ended without a summary"
                    )
                raise StopAsyncIteration
            if event.HasField("summary"):
                self._summary = event.summary
            else:
                self._batch, self._pos = list(event.results.results), 0

    async def _next_event(self) -> pb.RunSuiteResponse | None:
        try:
            return await self._events.__anext__()
        except StopAsyncIteration:
            return None
        except asyncio.CancelledError:
            # grpc.aio cancels a call whose request iterator raised: that is ours to report
            if self._chunks is None or self._chunks.error is None:
                raise
            self._done = True
            raise self._chunks.error from None
        except grpc.RpcError as err:
            self._done = True
            if self._chunks is not None and self._chunks.error is not None:
                raise self._chunks.error from None  # the case that could not be sent
            if self._chunks is not None:
                err = _settled(self._call, err)
            raise ScorewireError.from_rpc_error(err) from None

    @property
    def summary(self) -> pb.RunSummary:
        """The run's summary; available once every result has been read."""
        if self._summary is None:
            raise RuntimeError("the summary arrives after the last result: iterate first")
        return self._summary

    async def collect(self) -> tuple[list[pb.CaseResult], pb.RunSummary]:
        """Read every remaining result; return them with the summary."""
        results = [r async for r in self]
        return results, self.summary

    def cancel(self) -> None:
        """Cancel the call (the server stops scoring)."""
        self._call.cancel()

    async def __aenter__(self) -> AsyncSuiteRun:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        self.cancel()


_WRITE_RACE = "Internal error from Core"


def _settled(call: Any, err: grpc.RpcError) -> grpc.RpcError:
    """A client-streaming call's error as the caller should read it.

    When a call's deadline ends it while grpc.aio is still writing a request message, the
    failed write sets the status to INTERNAL "Internal error from Core": that is the
    deadline. (The server reads a refused client stream on before it answers, so its own
    refusals are not lost the same way.) Any other error is returned as it is.
    """
    code = getattr(err, "code", lambda: None)()
    details = getattr(err, "details", lambda: None)()
    remaining = call.time_remaining()
    expired = remaining is not None and remaining <= 0
    if code == grpc.StatusCode.INTERNAL and details == _WRITE_RACE and expired:
        return grpc.aio.AioRpcError(
            grpc.StatusCode.DEADLINE_EXCEEDED,
            grpc.aio.Metadata(),
            grpc.aio.Metadata(),
            "Deadline Exceeded",
            None,
        )
    return err


class _AsyncSuiteChunks:
    """A RunSuiteStream's messages: the config, then the cases 500 at a time, each chunk
    built when the call asks for it; a case that cannot be converted ends the stream and
    is kept in `error`."""

    def __init__(self, request: pb.RunSuiteRequest, cases: Sequence[CaseLike]) -> None:
        self._config = _convert.stream_suite_config(request, len(cases))
        self._cases = cases
        self.error: BaseException | None = None

    async def messages(self) -> AsyncIterator[pb.RunSuiteStreamRequest]:
        yield self._config
        try:
            for chunk in _convert.case_chunks(self._cases):
                yield chunk
        except Exception as err:
            self.error = err
            raise


class _AsyncRequestStream:
    """The ScoreStream request messages as an async generator (see sync._RequestStream)."""

    def __init__(
        self,
        config: pb.ScoreStreamRequest,
        cases: Iterable[StreamCaseLike] | AsyncIterable[StreamCaseLike],
    ) -> None:
        self._config = config
        self._cases = cases
        self.error: BaseException | None = None

    async def messages(self) -> AsyncIterator[pb.ScoreStreamRequest]:
        yield self._config
        try:
            if isinstance(self._cases, AsyncIterable):
                async for case in self._cases:
                    yield _convert.stream_case_request(case)
            else:
                for case in self._cases:
                    yield _convert.stream_case_request(case)
        except Exception as err:
            self.error = err
            raise
