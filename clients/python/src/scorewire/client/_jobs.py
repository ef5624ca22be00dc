"""The JobService calls of the blocking and asyncio clients (mixins of `Client` and
`AsyncClient`): evaluation jobs, which the server scores after their caller has gone.

`create_job` streams a plan and its cases once and returns the job as soon as the server
has stored it (QUEUED); the caller may disconnect then. `watch_job` yields the job as it
is now and again at each change of state or progress, ending at a terminal state
(SUCCEEDED, FAILED, CANCELLED); `wait_job` returns that last one, which for a job that
succeeded carries its run's summary, per-check aggregations and `run_id`. A job that
ends FAILED or CANCELLED is an answer (`job.state`, `job.error`), not an exception.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterable, Iterator, Mapping, Sequence
from typing import Any

import grpc
from scorewire.client import _convert
from scorewire.client._convert import CaseLike, CheckLike
from scorewire.client._run_calls import DEFAULT, Metadata
from scorewire.client.errors import ScorewireError
from scorewire.v1 import jobs_pb2 as jpb

JOB_CHUNK_CASES = _convert.STREAM_CHUNK_CASES
"""Most cases in one CreateJob message, as in a RunSuiteStream."""

JOB_CHUNK_BYTES = 4 * 1024 * 1024
"""Most bytes of cases in one CreateJob message (a larger case goes alone). The server
bounds the whole stream by its `max_message_bytes` and refuses more naming `cases`;
bounding each message keeps a batch of large cases within the channel's message limit
until the server has said so."""

STATES = {
    "queued": jpb.JOB_STATE_QUEUED,
    "running": jpb.JOB_STATE_RUNNING,
    "succeeded": jpb.JOB_STATE_SUCCEEDED,
    "failed": jpb.JOB_STATE_FAILED,
    "cancelled": jpb.JOB_STATE_CANCELLED,
}
TERMINAL_STATES = frozenset(
    (jpb.JOB_STATE_SUCCEEDED, jpb.JOB_STATE_FAILED, jpb.JOB_STATE_CANCELLED)
)
"""The states a job ends in; WatchJob ends after sending one of them."""


def state_value(state: str | int | None) -> int:
    """A JobState from its name (`queued`, ...), its value, or None (any state)."""
    if state is None or state == "":
        return jpb.JOB_STATE_UNSPECIFIED
    if isinstance(state, int):
        return state
    try:
        return STATES[state]
    except KeyError:
        raise ValueError(f"state must be one of {', '.join(STATES)}, not {state!r}") from None


def list_request(state: str | int | None, page_size: int, page_token: str) -> jpb.ListJobsRequest:
    """The ListJobsRequest of `list_jobs`."""
    return jpb.ListJobsRequest(
        state=state_value(state),  # type: ignore[arg-type]
        page_size=page_size,
        page_token=page_token,
    )


def job_config(
    *,
    case_count: int,
    suite_yaml: str,
    suite_name: str,
    checks: Iterable[CheckLike] | None,
    compact: Iterable[str] | None,
    name: str,
    labels: Mapping[str, str] | None,
    webhook_url: str,
    budget_usd: float | None = None,
) -> jpb.CreateJobRequest:
    """The first CreateJob message: the plan, the case count, the name, labels, webhook
    and judge budget."""
    config = jpb.JobConfig(
        suite_yaml=suite_yaml,
        suite_name=suite_name,
        checks=_convert.to_checks(checks),
        compact=list(compact or ()),
        case_count=case_count,
        name=name,
        labels=dict(labels or {}),
        webhook_url=webhook_url,
    )
    if budget_usd is not None:
        config.budget_usd = budget_usd
    return jpb.CreateJobRequest(config=config)


def case_messages(cases: Sequence[CaseLike]) -> Iterator[jpb.CreateJobRequest]:
    """The CreateJob messages carrying `cases` in order: up to JOB_CHUNK_CASES cases and
    JOB_CHUNK_BYTES bytes a message (a larger case alone), each built in place when it is
    asked for."""
    message, size = jpb.CreateJobRequest(), 0
    for obj in cases:
        batch = message.cases.cases
        case = batch.add()
        _convert.fill_case(case, obj)
        n = case.ByteSize()
        if len(batch) > 1 and (len(batch) > JOB_CHUNK_CASES or size + n > JOB_CHUNK_BYTES):
            del batch[-1]  # it opens the next message instead (built again there)
            yield message
            message, size = jpb.CreateJobRequest(), 0
            _convert.fill_case(message.cases.cases.add(), obj)
        size += n
    if message.HasField("cases"):
        yield message


class _Messages:
    """A CreateJob's messages, config first; a case that cannot be converted ends the
    stream and is kept in `error`, so the call raises it rather than the CANCELLED gRPC
    reports for a request iterator that failed."""

    def __init__(self, config: jpb.CreateJobRequest, cases: Sequence[CaseLike]) -> None:
        self._config = config
        self._cases = cases
        self.error: BaseException | None = None

    def __iter__(self) -> Iterator[jpb.CreateJobRequest]:
        yield self._config
        try:
            yield from case_messages(self._cases)
        except Exception as err:
            self.error = err
            raise

    async def __aiter__(self) -> AsyncIterator[jpb.CreateJobRequest]:
        for message in self:
            yield message


def _fail(err: grpc.RpcError, messages: _Messages | None = None) -> BaseException:
    """What a failed call raises: the caller's own conversion error, else ScorewireError."""
    if messages is not None and messages.error is not None:
        return messages.error
    return ScorewireError.from_rpc_error(err)


class JobCalls:
    """The JobService calls of the blocking `Client`."""

    _jobs: Any
    _call_args: Any

    def _job_call(self, method: str, req: Any, timeout: float | None, metadata: Any) -> Any:
        try:
            return getattr(self._jobs, method)(req, **self._call_args(timeout, metadata))
        except grpc.RpcError as err:
            raise _fail(err) from None

    def create_job(
        self,
        cases: Iterable[CaseLike],
        *,
        suite_yaml: str = "",
        suite_name: str = "",
        checks: Iterable[CheckLike] | None = None,
        compact: Iterable[str] | None = None,
        name: str = "",
        labels: Mapping[str, str] | None = None,
        webhook_url: str = "",
        budget_usd: float | None = None,
        timeout: float | None = DEFAULT,
        metadata: Metadata | None = None,
    ) -> jpb.Job:
        """Create a job scoring `cases` (as `run_suite` takes them) with the plan of
        `suite_yaml` (its own cases are not scored), `checks` and `compact`; returns the
        job, QUEUED, once the server has stored it and every case.

        The cases are streamed in messages of at most 500 cases and 4 MiB. `name` names
        the job and its run (empty: the suite's name, else `job`), `labels` label the run,
        `webhook_url` is POSTed the finished job, and `budget_usd` bounds what its judge
        calls spend over its whole life (default: the suite's `settings.budget`; cases
        past it score BUDGET_EXHAUSTED). Refusals raise `ScorewireError`:
        INVALID_ARGUMENT naming the check or case (`cases[12].output`), RESOURCE_EXHAUSTED
        past the server's case limit or its open jobs per tenant, FAILED_PRECONDITION for
        a webhook on a server with no secret to sign it with (`config.webhook_url`).
        """
        listed = cases if isinstance(cases, Sequence) else list(cases)
        config = job_config(
            case_count=len(listed), suite_yaml=suite_yaml, suite_name=suite_name,
            checks=checks, compact=compact, name=name, labels=labels, webhook_url=webhook_url,
            budget_usd=budget_usd,
        )  # fmt: skip
        messages = _Messages(config, listed)
        try:
            resp: jpb.CreateJobResponse = self._jobs.CreateJob(
                iter(messages), **self._call_args(timeout, metadata)
            )
        except grpc.RpcError as err:
            raise _fail(err, messages) from None
        return resp.job

    def get_job(
        self, job_id: str, *, timeout: float | None = DEFAULT, metadata: Metadata | None = None
    ) -> jpb.Job:
        """The job now: its state and progress; its summary and aggregations once it
        succeeded. NOT_FOUND for a job that does not exist or is another tenant's."""
        resp: jpb.GetJobResponse = self._job_call(
            "GetJob", jpb.GetJobRequest(job_id=job_id), timeout, metadata
        )
        return resp.job

    def cancel_job(
        self, job_id: str, *, timeout: float | None = DEFAULT, metadata: Metadata | None = None
    ) -> jpb.Job:
        """Cancel a queued or running job; returns it, CANCELLED. Its run ends incomplete
        with what was recorded. FAILED_PRECONDITION for a job that has already ended."""
        resp: jpb.CancelJobResponse = self._job_call(
            "CancelJob", jpb.CancelJobRequest(job_id=job_id), timeout, metadata
        )
        return resp.job

    def list_jobs(
        self,
        *,
        state: str | int | None = None,
        page_size: int = 0,
        page_token: str = "",
        timeout: float | None = DEFAULT,
        metadata: Metadata | None = None,
    ) -> Iterator[jpb.Job]:
        """The caller's jobs, newest first, optionally in one `state` (`queued`,
        `running`, `succeeded`, `failed`, `cancelled`), without summaries or aggregations
        (`get_job` has them). Pages of `page_size` (1 to 1000; 0: the server's 100) are
        fetched as the iteration reaches them, each call with its own `timeout`."""
        req = list_request(state, page_size, page_token)  # a bad state raises here
        return self._job_pages(req, timeout, metadata)

    def _job_pages(
        self, req: jpb.ListJobsRequest, timeout: float | None, metadata: Any
    ) -> Iterator[jpb.Job]:
        while True:
            page: jpb.ListJobsResponse = self._job_call("ListJobs", req, timeout, metadata)
            yield from page.jobs
            if not page.next_page_token:
                return
            req.page_token = page.next_page_token

    def watch_job(
        self, job_id: str, *, timeout: float | None = None, metadata: Metadata | None = None
    ) -> Iterator[jpb.Job]:
        """The job now, then again at each change of its state or progress; the iteration
        ends after the job reaches a terminal state (the last job yielded). No deadline
        unless `timeout` is given: a job may run for hours. Leaving the loop early ends
        the call."""
        call = self._jobs.WatchJob(
            jpb.WatchJobRequest(job_id=job_id), **self._call_args(timeout, metadata)
        )
        try:
            for resp in call:
                yield resp.job
        except grpc.RpcError as err:
            raise _fail(err) from None
        finally:
            call.cancel()  # a no-op once the call is over; stops it if the caller left early

    def wait_job(
        self, job_id: str, *, timeout: float | None = None, metadata: Metadata | None = None
    ) -> jpb.Job:
        """Watch the job to its end and return it: for a job that succeeded with its
        `summary`, `aggregations` and `run_id`; FAILED (with `error`) and CANCELLED jobs
        are returned too. No deadline unless `timeout` is given."""
        last = None
        for job in self.watch_job(job_id, timeout=timeout, metadata=metadata):
            last = job
        if last is None or last.state not in TERMINAL_STATES:
            raise ScorewireError(grpc.StatusCode.INTERNAL, "WatchJob ended before the job did")
        return last


class AsyncJobCalls:
    """The JobService calls of the asyncio `AsyncClient` (the blocking ones, awaited)."""

    _jobs: Any
    _call_args: Any

    async def _job_call(self, method: str, req: Any, deadline: float | None, metadata: Any) -> Any:
        try:
            return await getattr(self._jobs, method)(req, **self._call_args(deadline, metadata))
        except grpc.RpcError as err:
            raise _fail(err) from None

    async def create_job(
        self,
        cases: Iterable[CaseLike],
        *,
        suite_yaml: str = "",
        suite_name: str = "",
        checks: Iterable[CheckLike] | None = None,
        compact: Iterable[str] | None = None,
        name: str = "",
        labels: Mapping[str, str] | None = None,
        webhook_url: str = "",
        budget_usd: float | None = None,
        timeout: float | None = DEFAULT,  # noqa: ASYNC109 (a gRPC deadline)
        metadata: Metadata | None = None,
    ) -> jpb.Job:
        """`Client.create_job`: the job, QUEUED, once the server has stored it."""
        listed = cases if isinstance(cases, Sequence) else list(cases)
        config = job_config(
            case_count=len(listed), suite_yaml=suite_yaml, suite_name=suite_name,
            checks=checks, compact=compact, name=name, labels=labels, webhook_url=webhook_url,
            budget_usd=budget_usd,
        )  # fmt: skip
        messages = _Messages(config, listed)
        try:
            resp: jpb.CreateJobResponse = await self._jobs.CreateJob(
                messages.__aiter__(), **self._call_args(timeout, metadata)
            )
        except grpc.RpcError as err:
            raise _fail(err, messages) from None
        except asyncio.CancelledError:
            # grpc.aio cancels a call whose request iterator raised: report that error
            if messages.error is None:
                raise
            raise messages.error from None
        return resp.job

    async def get_job(
        self,
        job_id: str,
        *,
        timeout: float | None = DEFAULT,  # noqa: ASYNC109 (a gRPC deadline)
        metadata: Metadata | None = None,
    ) -> jpb.Job:
        """`Client.get_job`: the job now."""
        req = jpb.GetJobRequest(job_id=job_id)
        resp: jpb.GetJobResponse = await self._job_call("GetJob", req, timeout, metadata)
        return resp.job

    async def cancel_job(
        self,
        job_id: str,
        *,
        timeout: float | None = DEFAULT,  # noqa: ASYNC109 (a gRPC deadline)
        metadata: Metadata | None = None,
    ) -> jpb.Job:
        """`Client.cancel_job`: the job, CANCELLED."""
        req = jpb.CancelJobRequest(job_id=job_id)
        resp: jpb.CancelJobResponse = await self._job_call("CancelJob", req, timeout, metadata)
        return resp.job

    def list_jobs(
        self,
        *,
        state: str | int | None = None,
        page_size: int = 0,
        page_token: str = "",
        timeout: float | None = DEFAULT,
        metadata: Metadata | None = None,
    ) -> AsyncIterator[jpb.Job]:
        """`Client.list_jobs`: `async for` the caller's jobs, newest first, page by page."""
        req = list_request(state, page_size, page_token)  # a bad state raises here
        return self._job_pages(req, timeout, metadata)

    async def _job_pages(
        self, req: jpb.ListJobsRequest, deadline: float | None, metadata: Any
    ) -> AsyncIterator[jpb.Job]:
        while True:
            page: jpb.ListJobsResponse = await self._job_call("ListJobs", req, deadline, metadata)
            for job in page.jobs:
                yield job
            if not page.next_page_token:
                return
            req.page_token = page.next_page_token

    async def watch_job(
        self,
        job_id: str,
        *,
        timeout: float | None = None,  # noqa: ASYNC109 (a gRPC deadline)
        metadata: Metadata | None = None,
    ) -> AsyncIterator[jpb.Job]:
        """`Client.watch_job`: `async for` the job at each change, to its end."""
        call = self._jobs.WatchJob(
            jpb.WatchJobRequest(job_id=job_id), **self._call_args(timeout, metadata)
        )
        try:
            async for resp in call:
                yield resp.job
        except grpc.RpcError as err:
            raise _fail(err) from None
        finally:
            call.cancel()  # a no-op once the call is over; stops it if the caller left early

    async def wait_job(
        self,
        job_id: str,
        *,
        timeout: float | None = None,  # noqa: ASYNC109 (a gRPC deadline)
        metadata: Metadata | None = None,
    ) -> jpb.Job:
        """`Client.wait_job`: the job at its end, whatever state it ended in."""
        last = None
        async for job in self.watch_job(job_id, timeout=timeout, metadata=metadata):
            last = job
        if last is None or last.state not in TERMINAL_STATES:
            raise ScorewireError(grpc.StatusCode.INTERNAL, "WatchJob ended before the job did")
        return last
