"""The job runner: claims queued jobs, scores them chunk by chunk, checkpoints, resumes.

Each server process runs `jobs_runners` of these loops. A loop claims a queued job (or
a running one whose lease lapsed: its runner died) with a lease, and scores its
stored chunks in order through the scoring layer's executor, as RunSuite scores a batch
(`scoring.executor`'s rule: a plan with checks that wait on I/O on this event loop, any
other in the scoring workers). Each chunk's results are appended to the job's run in the
run store, and only then counted as done in the job store with the lease renewed: that
is the checkpoint.

The run store is the truth of what was scored: a runner that takes a job over counts the
cases its run already holds and resumes from the next chunk, so every case is recorded
exactly once. The one cost of a death is the chunk in flight, scored again (judge
verdicts come from the verdict cache the second time, not paid twice). A runner whose
lease is gone (the job was cancelled, or another runner took it over after a pause past
the lease) stops at its next renewal and records nothing more.

Runners are shared between tenants. A claim takes the job of the tenant running fewest
(`JobStore.claim`), and a job's work takes its tenant's share of the scoring workers and
judge slots, as the tenant's own calls do. Every `jobs_slice_s` a runner asks whether a
tenant running fewer jobs has one waiting; if so it queues its job again at the
checkpoint it just wrote and claims the other (a turn given back costs a few store
writes, not a case scored twice).
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import hashlib
import logging
import uuid
from collections.abc import AsyncIterator, Callable, Sequence
from datetime import timedelta
from typing import Any

from scorewire.core.context import CheckContext
from scorewire.core.fairness import UNTENANTED, current_caller, tenant_key
from scorewire.jobs.aggregate import run_summary
from scorewire.jobs.job_model import Job, JobPlan, JobState, JobStore
from scorewire.jobs.sql import micros
from scorewire.jobs.webhook import Webhooks, body_of
from scorewire.judge import Budget
from scorewire.runs import RunInfo, RunRecorder, RunStatus, iter_chunks, new_run_id, utc_now
from scorewire.runs.recorder import run_owner
from scorewire.runs.run_model import Chunk
from scorewire.scoring.chunks import ScoredBatch, job_maker
from scorewire.scoring.executor import Executor
from scorewire.scoring.inprocess import LocalRun
from scorewire.scoring.plan_source import PlanSource
from scorewire.scoring.plans import PlanInfo
from scorewire.scoring.recorded import cases_blob
from scorewire.settings import Settings
from scorewire.v1 import scoring_pb2 as pb

log = logging.getLogger("scorewire.jobs")

RUN_SOURCE = "Job"
MAX_CLAIMS = 10
"""A job claimed this many times without finishing fails: something in it (or in the
servers) stops every runner, and trying it forever would hold a runner for good."""
PRUNE_EVERY_S = 3600.0
"""Seconds between two deletions of old ended jobs."""


class LeaseLost(Exception):
    """The job is no longer this runner's (cancelled, or taken over)."""


class TurnGiven(Exception):
    """The job was queued again at its checkpoint for another tenant's turn."""


def job_source(executor: Executor, plan: JobPlan, max_checks: int) -> tuple[bytes, PlanSource]:
    """The job's plan as the executor compiles it, and its key (RunSuite's for the same
    checks: one compiled plan serves both)."""
    return executor.sources.get(
        plan.suite_yaml, plan.suite_name, plan.checks, plan.compact, None, max_checks, ""
    )


class JobRunner:
    """Runs claimed jobs to their end in this process (see the module)."""

    def __init__(
        self,
        settings: Settings,
        store: JobStore,
        executor: Executor,
        recorder: RunRecorder,
        contexts: Callable[[str | None], CheckContext],
        webhooks: Webhooks | None = None,
    ) -> None:
        self._settings = settings
        self._store = store
        self._executor = executor
        self._recorder = recorder
        self._contexts = contexts
        self._webhooks = webhooks
        self.owner = "jr_" + uuid.uuid4().hex[:16]
        """This process's name on the leases it holds."""
        self._tasks: list[asyncio.Task[None]] = []

    def start(self) -> None:
        """Start `jobs_runners` loops, and the retention of ended jobs."""
        for i in range(self._settings.jobs_runners):
            self._tasks.append(asyncio.create_task(self._loop(), name=f"scorewire-jobs-{i}"))
        if self._webhooks is not None and self._settings.jobs_runners:
            self._webhooks.start(self._store, self.owner, self._settings.jobs_poll_s)
        if self._settings.jobs_max_age_s:
            self._tasks.append(asyncio.create_task(self._prune_loop(), name="scorewire-jobs-prune"))

    async def close(self) -> None:
        """Stop the loops; a job they held is resumed after its lease by any server."""
        for t in self._tasks:
            t.cancel()
        for t in self._tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await t
        self._tasks.clear()
        if self._webhooks is not None:
            await self._webhooks.close()

    async def _loop(self) -> None:
        while True:
            try:
                job = await self._store.claim(self.owner, self._settings.jobs_lease_s)
            except Exception as err:  # the store down: look again later
                log.warning("claiming a job failed: %s", err)
                job = None
            if job is None:
                await asyncio.sleep(self._settings.jobs_poll_s)
                continue
            try:
                await self.run(job)
            except TurnGiven:
                log.debug("job %s: queued again for another tenant's job", job.job_id)
            except LeaseLost:
                log.info("job %s: no longer this runner's (cancelled or taken over)", job.job_id)
            except Exception:
                # Left running: its lease lapses and it is tried again, from its checkpoint.
                log.exception("job %s failed in this runner; it is resumed after its lease",
                              job.job_id)  # fmt: skip
                await asyncio.sleep(self._settings.jobs_poll_s)

    async def _prune_loop(self) -> None:
        """Delete ended jobs past `jobs_max_age_s`, now and every PRUNE_EVERY_S."""
        while True:
            before = utc_now() - timedelta(seconds=self._settings.jobs_max_age_s)
            try:
                n = await self._store.prune(micros(before))
                if n:
                    log.info("deleted %d ended jobs older than jobs_max_age_s", n)
            except Exception as err:
                log.warning("deleting old jobs failed: %s", err)
            await asyncio.sleep(PRUNE_EVERY_S)

    async def run(self, job: Job) -> None:
        """Score a claimed job from its checkpoint to its end (TurnGiven when it was
        queued again for another tenant's job first)."""
        current_caller.set(tenant_key(job.tenant) if job.tenant else UNTENANTED)
        if job.claims > MAX_CLAIMS:
            why = f"claimed {MAX_CLAIMS} times without finishing (the servers' logs say why)"
            await self._end(job, JobState.FAILED, job.cases_done, why)
            return
        key, source = job_source(self._executor, job.plan, self._settings.max_checks_per_request)
        try:
            info = await self._executor.info(key, source, None)
        except Exception as err:  # checked at creation: a server upgrade may refuse it
            await self._end(
                job, JobState.FAILED, job.cases_done, f"the plan no longer compiles: {err}"
            )
            return
        run = await self._run_of(job, info)
        keep = self._recorder.keep_alive(run_owner(run.run_id))
        renewing = asyncio.create_task(self._renew_loop(job))
        try:
            done = await self._score_all(job, run, key, source, info, renewing)
        except LeaseLost:
            await self._if_cancelled(job, run)
            raise
        finally:
            renewing.cancel()
            keep.stop()
        summary = await run_summary(self._recorder.store, run.run_id, info.names, info.types)
        run.status, run.ended_at, run.summary = RunStatus.COMPLETE, utc_now(), summary
        await self._recorder.finish(run)
        await self._end(job, JobState.SUCCEEDED, done, "", summary)

    async def _score_all(
        self, job: Job, run: RunInfo, key: bytes, source: PlanSource, info: PlanInfo,
        renewing: asyncio.Task[None],
    ) -> int:  # fmt: skip
        """Score, record and checkpoint the job's chunks after those its run holds;
        LeaseLost as soon as the job is no longer this runner's."""
        done = job.cases_done if job.progress_exact else await self._recorded(run.run_id)
        ctx = self._contexts(job.tenant or None)
        if info.settings.fresh_judges:  # the suite asks the judges again: since the job began
            ctx.fresh_since = job.created_at.timestamp()
        spent = _JobSpending(job, ctx)
        lease = self._settings.jobs_lease_s
        loop = asyncio.get_running_loop()
        turn_ends = loop.time() + self._settings.jobs_slice_s
        while done < job.cases_total:
            chunks = await self._store.chunks(job.job_id, done)
            if not chunks:
                raise LeaseLost()  # its cases are gone: the job ended (cancelled)
            for chunk in chunks:
                skip = max(0, done - chunk.first)  # recorded before a takeover
                cases = chunk.cases[skip:]
                if not cases:
                    continue
                batch = await self._score(key, source, info, cases, chunk.first + skip, ctx)
                if renewing.done():
                    raise LeaseLost()
                await self._recorder.append(
                    Chunk(run.run_id, cases_blob(batch.cases), batch.message, batch.count)
                )
                done += batch.count
                job.cases_done, job.spent_usd = done, spent.now()
                if not await self._store.renew(job.job_id, self.owner, lease, done,
                                               job.spent_usd):  # fmt: skip
                    raise LeaseLost()
                if done < job.cases_total and loop.time() >= turn_ends:
                    await self._maybe_give_turn(job, done)
                    turn_ends = loop.time() + self._settings.jobs_slice_s
        return done

    async def _maybe_give_turn(self, job: Job, done: int) -> None:
        """At a checkpoint after the job's slice: queue it again (TurnGiven) if a tenant
        running fewer jobs has one waiting."""
        if not await self._store.others_waiting(job.tenant):
            return
        if not await self._store.release(job.job_id, self.owner, done, job.spent_usd):
            raise LeaseLost()
        raise TurnGiven()

    async def _if_cancelled(self, job: Job, run: RunInfo) -> None:
        """End a cancelled job's run incomplete now (not three heartbeats later)."""
        now = await self._store.get(job.job_id)
        if now is not None and now.state == JobState.CANCELLED:
            run.status, run.ended_at = RunStatus.INCOMPLETE, utc_now()
            await self._recorder.finish(run)

    async def _end(
        self, job: Job, state: JobState, done: int, error: str,
        summary: dict[str, Any] | None = None,
    ) -> None:  # fmt: skip
        ended = dataclasses.replace(job, state=state, cases_done=done, error=error)
        hook = (job.webhook_url, body_of(ended)) if job.webhook_url else None
        if not await self._store.finish(job.job_id, self.owner, state, done, error, summary,
                                        hook):  # fmt: skip
            raise LeaseLost()
        job.state, job.cases_done, job.error = state, done, error
        if hook is not None and self._webhooks is not None:
            self._webhooks.poke()

    async def _renew_loop(self, job: Job) -> None:
        """Renew the lease every third of it while a chunk is scored; ends when it is lost."""
        lease = self._settings.jobs_lease_s
        while True:
            await asyncio.sleep(lease / 3)
            try:
                ok = await self._store.renew(
                    job.job_id, self.owner, lease, job.cases_done, job.spent_usd
                )
            except Exception as err:
                log.warning("job %s: renewing its lease failed: %s", job.job_id, err)
                continue
            if not ok:
                return

    async def _run_of(self, job: Job, info: PlanInfo) -> RunInfo:
        """The job's run: opened on its first claim, found again on a takeover."""
        store = self._recorder.store
        if job.run_id:
            await store.heartbeat(run_owner(job.run_id), utc_now())
            run = await store.get_run(job.run_id)
            if run is not None:
                await store.reopen(job.run_id)  # marked incomplete while nobody ran it
                run.status = RunStatus.RUNNING
                return run
        suite = job.plan.to_json()
        run = RunInfo(
            run_id=new_run_id(),
            name=job.name,
            source=RUN_SOURCE,
            tenant=job.tenant,
            labels={**job.labels, "job_id": job.job_id},
            started_at=utc_now(),
            suite=suite,
            suite_sha256=hashlib.sha256(suite.encode()).hexdigest(),
            checks=list(info.names),
        )
        await self._recorder.open(run)
        if not await self._store.set_run(job.job_id, self.owner, run.run_id):
            raise LeaseLost()
        job.run_id = run.run_id
        return run

    async def _recorded(self, run_id: str) -> int:
        """Cases the run holds: where the job resumes."""
        return sum([c.count async for _, c in iter_chunks(self._recorder.store, run_id)])

    async def _score(
        self, key: bytes, source: PlanSource, info: PlanInfo, cases: Sequence[bytes],
        first: int, ctx: CheckContext,
    ) -> ScoredBatch:  # fmt: skip
        """One chunk scored as RunSuite scores a batch, its results in one message."""
        if not info.any_async:
            make = job_maker(key, source, self._settings.check_timeout_s, None)
            scored = await self._executor.run(make(list(cases), first, len(cases)), None)
            return ScoredBatch(scored.message, scored.counts, cases, len(cases))
        suite = (await self._executor.compiled_here(key, source)).suite
        assert suite is not None  # checkllm documents are refused at creation
        run = LocalRun(
            suite.plan, [pb.Case.FromString(c) for c in cases], cases, (), ctx,
            concurrency=min(suite.settings.concurrency, self._settings.max_concurrency),
            max_reason_chars=self._settings.max_reason_chars, bounds_ms=None, first=first,
        )  # fmt: skip
        return await _joined(run.batches())


class _JobSpending:
    """A job's judge budget across its life: what its checkpoints recorded, plus what this
    runner's budget has spent since (`JobPlan.budget_usd`; no job budget: counted only).

    Each runner holds the rest of the job's budget under the tenant's token budget, so a
    job resumed on another server goes on from what its last checkpoint stored. A chunk
    scored again after a death reads its verdicts from the cache, so it is not paid
    twice; with an in-process cache on another server it may be (at most one chunk)."""

    def __init__(self, job: Job, ctx: CheckContext) -> None:
        self._before = job.spent_usd
        limit = job.plan.budget_usd
        left = None if limit is None else max(0.0, limit - job.spent_usd)
        self._budget = Budget(left, parent=ctx.budget)
        ctx.budget = self._budget

    def now(self) -> float:
        """USD spent over the job's life so far."""
        return self._before + self._budget.spent_usd


async def _joined(batches: AsyncIterator[ScoredBatch]) -> ScoredBatch:
    """The batches of one chunk as one (one message, one recorded chunk: a chunk is
    recorded whole or not at all, so a resumed job starts at a chunk's boundary)."""
    message = pb.RunSuiteResponse()
    cases: list[bytes] = []
    counts = None
    async for b in batches:
        message.MergeFromString(b.message)
        cases.extend(b.cases)
        if counts is None:
            counts = b.counts
        else:
            counts.summary.merge(b.counts.summary)
    assert counts is not None
    return ScoredBatch(message.SerializeToString(), counts, cases, len(cases))
