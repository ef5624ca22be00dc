"""The blocking client: `Client` and the `SuiteRun` of a RunSuite call."""

from __future__ import annotations

import queue
from collections.abc import Iterable, Iterator, Mapping, Sequence
from types import TracebackType
from typing import Any

import grpc
from scorewire.client import _channel, _convert, _labels, _shards
from scorewire.client._convert import (
    CaseLike,
    CheckLike,
    GateLike,
    OutputLike,
    SampleLike,
    StreamCaseLike,
)
from scorewire.client._jobs import JobCalls
from scorewire.client._labels import LabelLike
from scorewire.client._observe import Observer
from scorewire.client._run_calls import DEFAULT, Metadata, RunCalls
from scorewire.client.errors import ScorewireError
from scorewire.v1 import labels_pb2 as lpb
from scorewire.v1 import scoring_pb2 as pb


class Client(RunCalls, JobCalls):
    """A blocking scorewire client over one gRPC channel.

    `target` is `host:port` (resolved through DNS and balanced round-robin over every
    address), any gRPC target with a scheme (`unix:/path`, `ipv4:…`), or a list of
    `ip:port` addresses of replicas, balanced round-robin per call. Calls time out
    after `timeout` seconds unless given their own (None: no deadline); ScoreStream has
    no default deadline, since the caller decides how long it lives. Failed calls raise
    `ScorewireError`. Use as a context manager, or call `close()`.
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
        channel: grpc.Channel | None = None,
    ) -> None:
        if channel is None:
            target = _channel.normalize_target(target)
            opts = _channel.channel_options(keepalive_s, keepalive_timeout_s, options)
            if credentials is None:
                channel = grpc.insecure_channel(target, options=opts)
            else:
                channel = grpc.secure_channel(target, credentials, options=opts)
        self._channel = channel
        self._stub = _channel.stub(channel)
        self._labels = _channel.label_stub(channel)
        self._runs = _channel.run_stub(channel)
        self._jobs = _channel.job_stub(channel)
        self._timeout = timeout
        self._metadata = tuple(metadata)

    @property
    def channel(self) -> grpc.Channel:
        """The underlying gRPC channel."""
        return self._channel

    def close(self) -> None:
        """Close the channel; open calls are cancelled."""
        self._channel.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

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
    ) -> Observer:
        """An `Observer` sending production outputs to ObserveService over this channel.

        It holds up to `buffer_size` observations (past it `observe()` drops and counts
        `buffer_full`), sends batches of up to `batch_size` (1 to 1,000) or whatever waited
        `flush_interval_s`, each call with a `call_timeout_s` deadline, and sends a batch up
        to `max_attempts` times on UNAVAILABLE, RESOURCE_EXHAUSTED and DEADLINE_EXCEEDED,
        waiting a random time up to `initial_backoff_s`, doubled per retry up to
        `max_backoff_s`. Close it before the client.
        """
        return Observer(
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

    def score(
        self,
        output: OutputLike,
        *,
        sample: SampleLike = None,
        checks: Iterable[CheckLike] | None = None,
        compact: Iterable[str] | None = None,
        budget_usd: float | None = None,
        fresh_judges: bool | None = None,
        timeout: float | None = DEFAULT,
        metadata: Metadata | None = None,
    ) -> pb.ScoreResponse:
        """Score one output against `checks` and `compact` checks; one score per check,
        structured checks first. `output` is its text, a mapping {text, value,
        metadata} or an Output; `sample` a mapping {id, input, expected, metadata}.

        `fresh_judges=True` asks the judges again (JUDGE_CACHE_REFRESH): no verdict the
        server cached before this call is read, each judge call is made and charged to
        the budgets, and its verdict replaces the cached one; False reads the cache even
        where a suite says otherwise; None (the default) leaves it to the suite."""
        req = _convert.score_request(
            output=output,
            sample=sample,
            checks=checks,
            compact=compact,
            budget_usd=budget_usd,
            fresh_judges=fresh_judges,
        )
        try:
            resp: pb.ScoreResponse = self._stub.Score(req, **self._call_args(timeout, metadata))
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
    ) -> SuiteRun | _shards.ShardedRun:
        """Run a suite (YAML, or `checks`/`compact` with a `gate`) over `cases`.

        Iterate the returned `SuiteRun` for each case's result as it completes; its
        `summary` is set once the results are exhausted. Each case is a mapping
        {sample, output}, a (sample, output) pair, or a Case.

        With `shards=N` the batch runs as chunks of at most `chunk_cases` cases, N
        calls at a time over the channel (so over every replica it balances to), each
        chunk retried up to `chunk_attempts` times in all when its replica is lost;
        the returned ShardedRun yields each case once with its index in `cases`, and
        its summary is the chunks' merged, its gate judged again on the merged totals
        (`scorewire.client._shards` says how, budgets included). `timeout` is per chunk.
        With `record=True` several chunks are one recorded run, sent in parts.

        `part=(run_id, first_index)` sends the call as a part of a run opened with
        `open_run` (see `scorewire.client._run_calls`). `fresh_judges` as in `score`:
        True reruns a holdout against the judges as they answer today, cache on.
        """
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
                return self._run_streamed(listed, run, args)
            cases = listed
        req = run.request(cases)
        if shards is None:
            return SuiteRun(self._stub.RunSuite(req, **args))
        chunks = _shards.split(req, list(req.cases), shards, chunk_cases)
        run_id, close = "", None
        if _shards.one_recorded_run(req, chunks):
            run_id = self.open_run(run_name=run_name, labels=labels, suite=suite_yaml,
                                   record=True, timeout=timeout, metadata=metadata)  # fmt: skip
            _shards.as_parts(chunks, run_id)

            def close(summary: pb.RunSummary | None) -> None:
                self.close_run(run_id, summary, timeout=timeout, metadata=metadata)

        return _shards.ShardedRun(
            lambda chunk: SuiteRun(self._stub.RunSuite(chunk, **args)),
            chunks,
            shards,
            chunk_attempts,
            run_id,
            close,
        )

    def _run_streamed(
        self, cases: Sequence[CaseLike], run: _convert.SuiteFields, args: dict[str, Any]
    ) -> SuiteRun:
        """A RunSuiteStream: each chunk is sent as soon as it is built, so the server
        checks and scores the first while later ones are still being built here. A case
        that cannot be converted cancels the call and raises here, as in RunSuite."""
        feed: queue.SimpleQueue[pb.RunSuiteStreamRequest | None] = queue.SimpleQueue()

        def messages() -> Iterator[pb.RunSuiteStreamRequest]:
            while (message := feed.get()) is not None:
                yield message

        feed.put(_convert.stream_suite_config(run.request(()), len(cases)))
        call = self._stub.RunSuiteStream(messages(), **args)
        try:
            for chunk in _convert.case_chunks(cases):
                feed.put(chunk)
        except BaseException:
            call.cancel()
            raise
        finally:
            feed.put(None)
        return SuiteRun(call)

    def score_stream(
        self,
        cases: Iterable[StreamCaseLike],
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
        timeout: float | None = None,
        metadata: Metadata | None = None,
    ) -> Iterator[pb.ScoreStreamResponse]:
        """Score `cases` as they are produced; yields one response per case, in
        completion order, each echoing its case's `request_id`.

        `cases` may be a lazy iterator: it is consumed on a gRPC thread as the stream
        flows. Each case is a mapping {request_id, sample, output}, a (request_id,
        sample, output) triple, or a StreamCase.
        """
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
        requests = _RequestStream(config, cases)
        call = self._stub.ScoreStream(iter(requests), **self._call_args(timeout, metadata))
        return _responses(call, requests)

    def list_checks(
        self, *, timeout: float | None = DEFAULT, metadata: Metadata | None = None
    ) -> pb.ListChecksResponse:
        """The server's catalog of check types with their parameter schemas."""
        try:
            resp: pb.ListChecksResponse = self._stub.ListChecks(
                pb.ListChecksRequest(), **self._call_args(timeout, metadata)
            )
        except grpc.RpcError as err:
            raise ScorewireError.from_rpc_error(err) from None
        return resp

    def validate_suite(
        self,
        *,
        suite_yaml: str = "",
        suite_name: str = "",
        checks: Iterable[CheckLike] | None = None,
        compact: Iterable[str] | None = None,
        offline: bool = False,
        timeout: float | None = DEFAULT,
        metadata: Metadata | None = None,
    ) -> pb.ValidateSuiteResponse:
        """Every problem of a suite (or checks) without running it; an invalid suite is
        an answer (`valid` false), not an error. What it needs that the server lacks
        (a judge's credentials or price) is in `preconditions` (`runnable` false);
        `offline` leaves credentials out of it."""
        req = pb.ValidateSuiteRequest(
            suite_yaml=suite_yaml,
            suite_name=suite_name,
            checks=_convert.to_checks(checks),
            compact=list(compact or ()),
            offline=offline,
        )
        try:
            resp: pb.ValidateSuiteResponse = self._stub.ValidateSuite(
                req, **self._call_args(timeout, metadata)
            )
        except grpc.RpcError as err:
            raise ScorewireError.from_rpc_error(err) from None
        return resp

    def put_labels(
        self,
        labels: Iterable[LabelLike],
        *,
        request_id: str | None = None,
        timeout: float | None = DEFAULT,
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
            resp: lpb.PutLabelsResponse = self._labels.PutLabels(
                req, **self._call_args(timeout, metadata)
            )
        except grpc.RpcError as err:
            raise ScorewireError.from_rpc_error(err) from None
        return resp

    def list_labels(
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
        timeout: float | None = DEFAULT,
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
            resp: lpb.ListLabelsResponse = self._labels.ListLabels(
                req, **self._call_args(timeout, metadata)
            )
        except grpc.RpcError as err:
            raise ScorewireError.from_rpc_error(err) from None
        return resp

    def agreement(
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
        timeout: float | None = DEFAULT,
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
            resp: lpb.AgreementResponse = self._labels.Agreement(
                req, **self._call_args(timeout, metadata)
            )
        except grpc.RpcError as err:
            raise ScorewireError.from_rpc_error(err) from None
        return resp

    def calibrate(
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
        timeout: float | None = DEFAULT,
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
            resp: lpb.CalibrateResponse = self._labels.Calibrate(
                req, **self._call_args(timeout, metadata)
            )
        except grpc.RpcError as err:
            raise ScorewireError.from_rpc_error(err) from None
        return resp


class SuiteRun(Iterator[pb.CaseResult]):
    """The results of a RunSuite call, one CaseResult per case in completion order.

    After the last result, `summary` holds the run's RunSummary. A failed call raises
    `ScorewireError` from the iteration. `cancel()` (or leaving a `with` block) stops
    the run early.
    """

    def __init__(self, call: Any) -> None:
        self._call = call
        self._batch: Iterator[pb.CaseResult] = iter(())
        self._summary: pb.RunSummary | None = None
        self._done = False

    def __iter__(self) -> SuiteRun:
        return self

    def __next__(self) -> pb.CaseResult:
        while True:
            result = next(self._batch, None)
            if result is not None:
                return result
            if self._done:
                raise StopIteration
            event = self._next_event()
            if event is None:
                self._done = True
                if self._summary is None:
                    raise ScorewireError(
                        grpc.StatusCode.INTERNAL, "RunSuite ended without a summary"
                    )
                raise StopIteration
            if event.HasField("summary"):
                self._summary = event.summary
            else:
                self._batch = iter(event.results.results)

    def _next_event(self) -> pb.RunSuiteResponse | None:
        try:
            event: pb.RunSuiteResponse = next(self._call)
        except StopIteration:
            return None
        except grpc.RpcError as err:
            self._done = True
            raise ScorewireError.from_rpc_error(err) from None
        return event

    @property
    def summary(self) -> pb.RunSummary:
        """The run's summary; available once every result has been read."""
        if self._summary is None:
            raise RuntimeError("the summary arrives after the last result: iterate first")
        return self._summary

    def collect(self) -> tuple[list[pb.CaseResult], pb.RunSummary]:
        """Read every remaining result; return them with the summary."""
        results = list(self)
        return results, self.summary

    def cancel(self) -> None:
        """Cancel the call (the server stops scoring)."""
        self._call.cancel()

    def __enter__(self) -> SuiteRun:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.cancel()


class _RequestStream:
    """The ScoreStream request messages: the config, then each case converted.

    A case that cannot be converted ends the stream; the exception is kept so the
    response side raises it instead of the CANCELLED status gRPC reports.
    """

    def __init__(self, config: pb.ScoreStreamRequest, cases: Iterable[StreamCaseLike]) -> None:
        self._config = config
        self._cases = cases
        self.error: BaseException | None = None

    def __iter__(self) -> Iterator[pb.ScoreStreamRequest]:
        yield self._config
        try:
            for case in self._cases:
                yield _convert.stream_case_request(case)
        except Exception as err:
            self.error = err
            raise


def _responses(call: Any, requests: _RequestStream) -> Iterator[pb.ScoreStreamResponse]:
    try:
        yield from call
        if requests.error is not None:
            raise requests.error
    except grpc.RpcError as err:
        if requests.error is not None:
            raise requests.error from None
        raise ScorewireError.from_rpc_error(err) from None
    finally:
        call.cancel()  # a no-op once the call is over; stops it if the caller left early
