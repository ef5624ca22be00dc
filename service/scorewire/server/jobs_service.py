"""The JobService handlers: check what the caller sends, call the job store, convert back.

A CreateJob is checked whole before anything is stored, as a RunSuite is: the plan
compiled in a scoring worker within the request limits, every case held to the output
limits and JSON rules with its path (`cases[i]`), the count to the declared one and to
`SCOREWIRE_JOBS_MAX_CASES`; then the job and its cases are stored in one transaction.
The runner (`jobs.runner`) does the rest. A job is its tenant's: another tenant's job
is NOT_FOUND, as one that does not exist.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import dataclasses
import math
from collections.abc import AsyncIterator, Callable
from typing import Any
from urllib.parse import urlsplit

import grpc
from scorewire.core.errors import FieldViolation
from scorewire.jobs import (
    CaseChunk,
    Job,
    JobPlan,
    JobState,
    JobStore,
    JobsUnavailable,
    TooManyOpenJobs,
    new_job_id,
)
from scorewire.jobs.job_runner import job_source
from scorewire.jobs.sql import micros
from scorewire.scoring.plans import PlanInfo
from scorewire.server.call_context import deadline
from scorewire.server.registration import add_service
from scorewire.server.run_records import check_run_fields, visible_tenant
from scorewire.server.scoring_service import ScoringService
from scorewire.server.security import principal
from scorewire.server.status import (
    RequestRejected,
    checked_stream,
    guarded_stream,
    guarded_unary,
    invalid_argument,
    resource_exhausted,
)
from scorewire.settings import Settings
from scorewire.suites.checkllm_request import CHECKLLM
from scorewire.v1 import jobs_pb2 as jpb
from scorewire.v1 import jobs_pb2_grpc as jpb_grpc

Context = grpc.aio.ServicerContext[Any, Any]

WATCH_POLL_S = 0.25
"""Seconds between two reads of a watched job (any replica may be running it)."""
_STATES = {s: getattr(jpb, f"JOB_STATE_{s.name}") for s in JobState}
_STATES_BACK = {v: k for k, v in _STATES.items()}


class JobService(jpb_grpc.JobServiceServicer):
    """scorewire.v1.JobService on grpc.aio."""

    def __init__(self, settings: Settings, store: JobStore, scoring: ScoringService) -> None:
        self._settings = settings
        self._store = store
        self._scoring = scoring

    @guarded_unary
    async def CreateJob(
        self, requests: AsyncIterator[jpb.CreateJobRequest], context: Context
    ) -> jpb.CreateJobResponse:
        """Check the config and every case, then store the job whole."""
        stream = aiter(checked_stream(requests))
        first = await anext(stream, None)
        if first is None or first.WhichOneof("message") != "config":
            raise invalid_argument([_at("config", "the first message of a CreateJob is a config")])
        job, info = await self._job(first.config, context)
        check = self._scoring.cases.case_checker(info)
        with contextlib.ExitStack() as held:  # the cases' bytes, until they are stored
            hold = self._scoring.in_flight.holding
            cases = await _cases(stream, first.config.case_count, check, self._settings,
                                 lambda n: held.enter_context(hold(n, "cases")))  # fmt: skip
            await self._create(job, cases)
        return jpb.CreateJobResponse(job=job_to_pb(job))

    async def _create(self, job: Job, cases: list[bytes]) -> None:
        size = self._settings.jobs_chunk_cases
        chunks = [CaseChunk(i // size, i, cases[i : i + size]) for i in range(0, len(cases), size)]
        try:
            await self._store.create(job, chunks, self._settings.jobs_max_open_per_tenant)
        except TooManyOpenJobs as err:
            limit = self._settings.jobs_max_open_per_tenant
            raise resource_exhausted(
                "config", f"{err}: at most jobs_max_open_per_tenant ({limit}) at once"
            ) from None
        except JobsUnavailable as err:
            raise _unavailable(err) from None

    async def _job(self, config: jpb.JobConfig, context: Context) -> tuple[Job, PlanInfo]:
        """The job a config describes, its plan compiled (not stored yet)."""
        s = self._settings
        if not 1 <= config.case_count <= s.jobs_max_cases:
            limit = s.jobs_max_cases
            raise resource_exhausted("config.case_count", f"send 1 to jobs_max_cases ({limit})")
        self._scoring.cases.plan_size(len(config.checks), config.compact, config.suite_yaml)
        asked = config.budget_usd if config.HasField("budget_usd") else None
        if asked is not None and not 0 <= asked < math.inf:  # also NaN
            raise invalid_argument([_at("config.budget_usd", "must be a finite number ≥ 0")])
        plan = JobPlan(
            config.suite_yaml, config.suite_name,
            tuple(c.SerializeToString(deterministic=True) for c in config.checks),
            tuple(config.compact),
        )  # fmt: skip
        executor = self._scoring.executor
        key, source = job_source(executor, plan, s.max_checks_per_request)
        info = await executor.info(key, source, deadline(context))
        if info.format == CHECKLLM:
            raise invalid_argument(
                [_at("config.suite_yaml", "a checkllm document cannot be a job")]
            )
        budget = asked if asked is not None else info.settings.budget
        # A judge this server cannot call, or cannot price under the job's budget (or the
        # token's, or the server's), is refused now, not on every case after the caller left.
        self._scoring.calls.preflight(info, budget)
        plan = dataclasses.replace(plan, budget_usd=budget)
        _check_webhook(config.webhook_url, s)
        labels = check_run_fields(config.name, dict(config.labels), s, "config")
        who = principal(context)
        name = config.name or config.suite_name or "job"
        return Job(new_job_id(), who.name if who is not None else "", name, plan,
                   config.case_count, labels, config.webhook_url), info  # fmt: skip

    @guarded_unary
    async def GetJob(self, request: jpb.GetJobRequest, context: Context) -> jpb.GetJobResponse:
        """The job, when the caller may see it."""
        return jpb.GetJobResponse(job=job_to_pb(await self._visible(request.job_id, context)))

    @guarded_stream
    async def WatchJob(
        self, request: jpb.WatchJobRequest, context: Context
    ) -> AsyncIterator[jpb.WatchJobResponse]:
        """The job now, then at each change of state or progress, until it ends."""
        last = None
        while True:
            job = await self._visible(request.job_id, context)
            now = (job.state, job.cases_done, job.run_id)
            if now != last:
                last = now
                yield jpb.WatchJobResponse(job=job_to_pb(job))
            if job.state.terminal:
                return
            await asyncio.sleep(WATCH_POLL_S)

    @guarded_unary
    async def CancelJob(
        self, request: jpb.CancelJobRequest, context: Context
    ) -> jpb.CancelJobResponse:
        """Cancel a job that has not ended; FAILED_PRECONDITION for one that has."""
        job = await self._visible(request.job_id, context)
        try:
            cancelled = await self._store.cancel(job.job_id)
            job = await self._visible(request.job_id, context)
        except JobsUnavailable as err:
            raise _unavailable(err) from None
        if not cancelled:
            message = f"the job has ended already ({job.state.value})"
            raise RequestRejected(grpc.StatusCode.FAILED_PRECONDITION, message,
                                  [_at("job_id", message)])  # fmt: skip
        return jpb.CancelJobResponse(job=job_to_pb(job))

    @guarded_unary
    async def ListJobs(
        self, request: jpb.ListJobsRequest, context: Context
    ) -> jpb.ListJobsResponse:
        """The caller's jobs, newest first, paged."""
        size = request.page_size or 100
        if not 1 <= size <= 1000:
            raise invalid_argument([_at("page_size", "must be 1 to 1000 (0 means 100)")])
        before = _cursor(request.page_token)
        state = _STATES_BACK.get(request.state)
        try:
            jobs = await self._store.list_jobs(
                visible_tenant(principal(context)), state, before, size + 1
            )
        except JobsUnavailable as err:
            raise _unavailable(err) from None
        out = jpb.ListJobsResponse(jobs=[job_to_pb(j, full=False) for j in jobs[:size]])
        if len(jobs) > size:
            last = jobs[size - 1]
            token = f"{micros(last.created_at)}:{last.job_id}"
            out.next_page_token = base64.urlsafe_b64encode(token.encode()).decode()
        return out

    async def _visible(self, job_id: str, context: Context) -> Job:
        """The job, when it exists and the caller may see it; else NOT_FOUND."""
        if not job_id:
            raise invalid_argument([_at("job_id", "is required")])
        try:
            job = await self._store.get(job_id)
        except JobsUnavailable as err:
            raise _unavailable(err) from None
        tenant = visible_tenant(principal(context))
        if job is None or (tenant is not None and job.tenant != tenant):
            message = f"no job {job_id!r}"
            raise RequestRejected(grpc.StatusCode.NOT_FOUND, message, [_at("job_id", message)])
        return job


async def _cases(
    stream: AsyncIterator[jpb.CreateJobRequest], declared: int, check: Any, settings: Settings,
    hold: Callable[[int], None],
) -> list[bytes]:  # fmt: skip
    """The stream's cases, each checked (its path `cases[i]`): exactly `declared`, in
    messages within `max_message_bytes` together, each message's bytes held with `hold`
    (the server's bytes in flight: RESOURCE_EXHAUSTED when they do not fit)."""
    out: list[bytes] = []
    size, limit = 0, settings.max_message_bytes
    async for message in stream:
        if message.WhichOneof("message") != "cases":
            raise invalid_argument([_at("message", "a CreateJob sends one config, then cases")])
        n = message.ByteSize()
        size += n
        if size > limit:
            raise resource_exhausted(
                "cases", f"the stream's messages together exceed max_message_bytes ({limit})"
            )
        hold(n)
        for case in message.cases.cases:
            if len(out) >= declared:
                raise invalid_argument(
                    [_at("config.case_count", f"{declared} declared, more sent")]
                )
            data = case.SerializeToString()
            check(data, len(out))
            out.append(data)
    if len(out) != declared:
        raise invalid_argument([_at("config.case_count", f"{declared} declared, {len(out)} sent")])
    return out


def _check_webhook(url: str, settings: Settings) -> None:
    if not url:
        return
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc or len(url) > 2048:
        raise invalid_argument(
            [_at("config.webhook_url", "must be an http(s) URL of ≤ 2048 characters")]
        )
    if settings.jobs_webhook_secret is None:
        message = "the server has no SCOREWIRE_JOBS_WEBHOOK_SECRET to sign webhooks with"
        raise RequestRejected(grpc.StatusCode.FAILED_PRECONDITION, message,
                              [_at("config.webhook_url", message)])  # fmt: skip


def _cursor(token: str) -> tuple[int, str] | None:
    if not token:
        return None
    try:
        us, job_id = base64.urlsafe_b64decode(token.encode()).decode().split(":", 1)
        return int(us), job_id
    except ValueError:
        raise invalid_argument([_at("page_token", "is not a token this server gave")]) from None


def _at(field: str, description: str) -> FieldViolation:
    return FieldViolation(field, description)


def _unavailable(err: JobsUnavailable) -> RequestRejected:
    return RequestRejected(grpc.StatusCode.UNAVAILABLE, str(err))


def job_to_pb(job: Job, *, full: bool = True) -> jpb.Job:
    """A job as the API serves it (`full`: with its summary and aggregations)."""
    from scorewire.server.run_records import summary_pb

    m = jpb.Job(
        job_id=job.job_id, name=job.name, state=_STATES[job.state], cases_total=job.cases_total,
        cases_done=job.cases_done, run_id=job.run_id, error=job.error, labels=job.labels,
    )  # fmt: skip
    m.created_at.FromDatetime(job.created_at)
    m.updated_at.FromDatetime(job.updated_at)
    if job.plan.budget_usd is not None:
        m.budget_usd = job.plan.budget_usd
    m.spent_usd = job.spent_usd
    if full and job.summary is not None:
        m.summary.CopyFrom(summary_pb(job.summary, job.run_id))
        for agg in job.summary.get("aggregations", ()):
            m.aggregations.add(**agg)
    return m


def add_job_service(
    server: Any, settings: Settings, store: JobStore, scoring: ScoringService
) -> str:
    """Register a JobService on `server`; returns its full name."""
    service = JobService(settings, store, scoring)
    return add_service(server, service, jpb.DESCRIPTOR.services_by_name["JobService"])
