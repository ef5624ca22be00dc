"""checkllm suites: a RunSuite with recorded or generated outputs, and a ScoreStream with
recorded ones.

By the executor's rule (`scoring.executor`), a RunSuite whose every combination has a
recorded output and whose checks wait on nothing is scored in the scoring workers, in
chunks (`checkllm_chunks`); any other run (outputs to generate, judge checks) is scored
here, on the event loop, as is a ScoreStream. Either way the cases are checked first by
the same code (`RecordedCases`), and the results and summary are written by the same
code (`checkllm_results`). A scoring worker has already compiled the document within
the request limits; it is compiled again here (`Executor.compiled_here`), off the event
loop, because its cases are matched here. Each test is its own plan, so every result is
converted with its test's checks, and the summary totals checks by name
(`GroupedSummaryBuilder`) beside the prompt × provider matrix.

Generation uses the server's own provider credentials (`ProviderCredentials.from_settings`:
the judge's keys and base URLs) and nothing from the request. Its money is its own: a
per-request `Budget` under the server-wide `PeriodBudget`, apart from the judge budgets;
its cache is the generation cache (`scorewire.generation.output_cache`) in the verdict cache's
store. The request's deadline bounds every call, and cancelling the RPC cancels the calls
in flight (`run_groups` closes them).
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import AsyncIterator, Callable, Sequence
from typing import Any

from scorewire.core.context import CheckContext
from scorewire.core.cost import LimitExceeded
from scorewire.core.errors import FieldViolation, SpecError
from scorewire.core.model import ErrorCode, Score
from scorewire.engine.runner import Case, CaseResult, score_case
from scorewire.generation.accounts import SdkClients
from scorewire.generation.generator import (
    GenerationJob,
    GenerationStats,
    Generator,
    Group,
    JobResult,
    ProviderCall,
    Recorded,
    run_groups,
)
from scorewire.generation.providers import Provider, ProviderCredentials, build_provider
from scorewire.judge import Budget, PeriodBudget
from scorewire.judge.cache import VerdictCache
from scorewire.judge.pricing import PriceTable
from scorewire.judge.shared import Ledger, SharedBudget
from scorewire.scoring import wire
from scorewire.scoring.checkllm_chunks import (
    OUTPUT_LIMIT,
    RecordedCases,
    checkllm_job_maker,
    checkllm_jobs,
    sent_output,
)
from scorewire.scoring.checkllm_results import CheckllmResults, grouped_builder, summary_message
from scorewire.scoring.executor import DeadlineExpired, Executor
from scorewire.scoring.inprocess import batched
from scorewire.scoring.limits import output_problem
from scorewire.scoring.plan_source import PlanSource
from scorewire.scoring.plans import PlanInfo
from scorewire.scoring.protocol import CheckllmCounts
from scorewire.settings import Settings
from scorewire.suites.checkllm_request import (
    CaseKey,
    Matrix,
    Unrunnable,
    combination_of,
    generation_calls,
    preflight,
    recorded_groups,
    resolve_combination,
)
from scorewire.suites.checkllm_suite import CheckllmSuite
from scorewire.v1 import scoring_pb2 as pb


def _output_limit(text: str, field: str, caps: Sequence[int | None], settings: Settings) -> None:
    """LimitExceeded (RESOURCE_EXHAUSTED) for an output over the output limits."""
    problem = output_problem(text, field, caps, settings)
    if problem is not None:
        raise LimitExceeded(OUTPUT_LIMIT, *problem)


class CheckllmRuns:
    """The checkllm side of a ScoringService: its generation budget and cache."""

    def __init__(
        self, settings: Settings, ledger: Ledger | None, observer: Any, executor: Executor
    ) -> None:
        """`ledger`: the judge's shared-budget store (Redis), which holds the generation
        budget too when there is one; `observer`: the metrics; `executor`: where a run of
        recorded outputs is scored (its workers)."""
        self._settings = settings
        self._observer = observer
        self._executor = executor
        self._period_budget: Budget | None = None
        limit, period = settings.generation_budget_usd, settings.generation_budget_period_s
        if limit is not None:
            # On the judge's Redis when there is one: every replica spends the same limit.
            self._period_budget = (
                SharedBudget(ledger, "generation", limit, period_s=period)
                if ledger is not None
                else PeriodBudget(limit, period)
            )
        self._cache: VerdictCache | None = None
        self._clients = SdkClients(
            start=settings.generation_provider_concurrency,
            most=settings.generation_provider_max_concurrency,
            tenant_share=settings.generation_provider_tenant_share,
        )
        """The providers' accounts (SDK clients, windows), shared by every request's."""
        self._prices = PriceTable.from_settings(settings)
        if settings.generation_enabled:
            # The SDKs take seconds to import (measured 3.6 s for openai on a loaded
            # machine): at start-up, not inside the first generating request's event loop.
            import anthropic  # noqa: F401
            import openai  # noqa: F401

    @property
    def period_budget(self) -> Budget | None:
        """The server-wide generation budget of the current period, when one is set: in
        Redis (shared by every replica) when the judge's budgets are, else this process's."""
        return self._period_budget

    def _shared_cache(self) -> VerdictCache | None:
        if not self._settings.generation_cache_enabled:
            return None
        if self._cache is None:
            from scorewire.generation.output_cache import generation_cache

            s = self._settings
            self._cache = generation_cache(
                s.cache_url,
                ttl_s=s.cache_ttl_s or None,
                timeout_s=s.cache_timeout_s,
                backoff_s=s.cache_backoff_s,
                pool_size=s.cache_pool_size,
                tls_ca=s.redis_tls_ca,
                memory_bytes=s.cache_memory_bytes,
                tenant_max_bytes=s.cache_tenant_max_bytes,
                evictions_per_store=s.cache_tenant_evictions_per_store,
            )
        return self._cache

    async def aclose(self) -> None:
        """Close the generation cache's and the providers' connections."""
        await self._clients.aclose()
        if self._cache is not None:
            await self._cache.aclose()

    def _preflight(self, suite: CheckllmSuite, *, generating: bool) -> None:
        """Unrunnable (FAILED_PRECONDITION) when this server cannot run the suite."""
        preflight(suite, self._settings, generating=generating)

    # ---- RunSuite ----------------------------------------------------------------------

    async def groups(
        self, suite: CheckllmSuite, cases: Sequence[Any], parse: Callable[[Any], pb.Case]
    ) -> list[Group]:
        """The run's jobs: the request's recorded cases (their bytes, read by `parse`),
        else the document's and generated."""
        if cases:
            checker = RecordedCases(suite, self._settings, parse)
            outputs: list[str | bytes] = []
            combinations: list[int] = []
            start = 0
            while start < len(cases):
                start = checker.take(cases, start, outputs, combinations)
                await asyncio.sleep(0)  # a turn for others after each chunk, as in the workers
            own = checker.finish()
            recorded = [(c, sent_output(o)) for c, o in zip(combinations, outputs, strict=True)]
            return recorded_groups(suite, recorded, own)
        groups = suite.groups()
        calls = generation_calls(groups)
        if calls and not self._settings.generation_enabled:
            raise Unrunnable(
                "cases",
                f"{calls} combinations have no recorded output and this server does not "
                "generate outputs (SCOREWIRE_GENERATION_ENABLED is off): send them as cases",
            )
        limit = self._settings.generation_max_calls_per_request
        if calls > limit:
            raise LimitExceeded(
                "generation_max_calls_per_request",
                "cases",
                f"{calls} outputs to generate exceed generation_max_calls_per_request ({limit})",
            )
        return groups

    def _budget(self, request: pb.RunSuiteRequest) -> Budget:
        limit = self._settings.generation_budget_per_request_usd
        if request.HasField("generation_budget_usd"):
            asked = request.generation_budget_usd
            if not 0 <= asked < math.inf:  # also NaN
                raise SpecError.at("generation_budget_usd", "must be a finite number ≥ 0")
            limit = min(limit, asked)
        return Budget(limit, parent=self._period_budget)

    def _providers(self, groups: Sequence[Group], suite: CheckllmSuite) -> dict[str, Provider]:
        needed = {
            job.source.provider
            for g in groups
            for job in g.jobs
            if isinstance(job.source, ProviderCall)
        }
        creds = ProviderCredentials.from_settings(self._settings)
        providers: dict[str, Provider] = {}
        for i, ref in enumerate(suite.providers):
            if ref.id not in needed:
                continue
            try:
                providers[ref.id] = build_provider(
                    ref,
                    creds,
                    max_retries=self._settings.generation_max_retries,
                    clients=self._clients,
                )
            except ValueError as err:
                raise Unrunnable(f"suite_yaml.providers[{i}]", str(err)) from None
        return providers

    def in_workers(self, suite: CheckllmSuite, info: PlanInfo, cases: Sequence[Any]) -> bool:
        """Whether a RunSuite of `suite` is scored in the scoring workers (the executor's
        rule): every combination has a recorded output (cases were sent, or the document
        records them all) and no test's checks wait on I/O as a worker compiled them
        (`info`: a server-side custom check is an async stand-in there)."""
        return (
            self._executor.pool is not None
            and not info.any_async
            and (bool(cases) or suite.all_recorded)
        )

    async def run_suite(
        self,
        suite: CheckllmSuite,
        request: pb.RunSuiteRequest,
        cases: Sequence[Any],
        parse: Callable[[Any], pb.Case],
        ctx: CheckContext,
        plan: tuple[bytes, PlanSource, PlanInfo],
    ) -> AsyncIterator[pb.RunSuiteResponse | bytes]:
        """Produce (when needed), score and stream every combination, then the summary;
        `cases`: the request's recorded cases as sent, read by `parse`; `plan`: the key
        and source of the document (what a scoring worker compiles) and what a worker
        learnt of it."""
        key, source, info = plan
        if self.in_workers(suite, info, cases):
            run = self._run_in_workers(suite, cases, parse, ctx, (key, source))
        else:
            run = self._run_here(suite, request, cases, parse, ctx)
        async for response in run:
            yield response

    async def _run_in_workers(
        self,
        suite: CheckllmSuite,
        cases: Sequence[Any],
        parse: Callable[[Any], pb.Case],
        ctx: CheckContext,
        plan: tuple[bytes, PlanSource],
    ) -> AsyncIterator[pb.RunSuiteResponse | bytes]:
        """Score recorded outputs in the workers, chunk by chunk as a plain batch is: a
        chunk goes as soon as its cases are checked; any problem is the call's error
        before anything is answered."""
        executor = self._executor
        checker = RecordedCases(suite, self._settings, parse)
        make = checkllm_job_maker(*plan, self._settings.check_timeout_s, executor.bounds_ms)
        run = executor.chunk_run(checkllm_jobs(cases, checker, make), ctx.deadline)
        try:
            await run.check()
            self._preflight(suite, generating=False)
        except BaseException:
            await run.close(detach=True)  # refused before any answer
            raise
        builder, matrix, plans = grouped_builder(suite), Matrix(suite), suite.plans()
        observer = self._observer
        try:
            async for batch in run.batches():
                counts = batch.counts
                assert isinstance(counts, CheckllmCounts)
                builder.merge(counts.summary)
                matrix.add_counts(counts.cells)
                if observer is not None:
                    for test, tallied in counts.tallies:
                        observer.observe_tally(plans[test], tallied)
                yield batch.message
        finally:
            await run.close()
        if ctx.past_deadline():
            # As a plain RunSuite's: the last checks answered DEADLINE_EXCEEDED, and the
            # call ends so rather than with a summary that races the caller's own timer.
            raise DeadlineExpired()
        yield summary_message(suite, builder, matrix, GenerationStats(), observer)

    async def _run_here(
        self,
        suite: CheckllmSuite,
        request: pb.RunSuiteRequest,
        cases: Sequence[Any],
        parse: Callable[[Any], pb.Case],
        ctx: CheckContext,
    ) -> AsyncIterator[pb.RunSuiteResponse | bytes]:
        """Produce (when needed) and score every combination on the event loop."""
        groups = await self.groups(suite, cases, parse)
        generating = generation_calls(groups) > 0
        self._preflight(suite, generating=generating)
        budget = self._budget(request)
        providers = self._providers(groups, suite) if generating else {}
        generator = Generator(
            providers,
            budget=budget,
            prices=self._prices,
            cache=suite.settings.cache,
            timeout_s=self._settings.generation_timeout_s,
            shared_cache=self._shared_cache(),
            # Tenants share generations only when they trust each other: a hit would tell
            # one what another asked.
            tenant=None if self._settings.tenants_trust_each_other else ctx.tenant,
            deadline=ctx.deadline,
        )
        builder, matrix = grouped_builder(suite), Matrix(suite)
        # Generating, the calls wait on the provider account's window, not the CPU.
        cap = (
            self._settings.generation_max_concurrency
            if generating
            else self._settings.max_concurrency
        )
        concurrency = min(suite.settings.effective_concurrency, cap)
        writer = CheckllmResults(
            suite, self._settings.max_reason_chars, self._settings.generation_max_output_chars
        )
        observer = self._observer
        provider_at = {ref.id: k for k, ref in enumerate(suite.providers)}
        try:
            results = run_groups(groups, generator, ctx, concurrency=concurrency)
            async for batch in batched(results):
                for jr in batch:
                    builder.add_named(jr.result, jr.names, jr.types)
                    matrix.add(jr)
                    if observer is not None:
                        observer.observe_results(jr.group.plan, (jr.result,))
                        if not _recorded(jr.job):
                            observer.observe_generation(
                                jr.job.provider, _outcome(jr), jr.produced.cost_usd
                            )
                yield writer.message([_result(writer, jr, provider_at) for jr in batch])
        finally:
            await generator.aclose()
        yield summary_message(suite, builder, matrix, generator.stats, observer)

    # ---- ScoreStream -------------------------------------------------------------------

    async def stream(
        self,
        suite: CheckllmSuite,
        requests: AsyncIterator[pb.ScoreStreamRequest],
        ctx: CheckContext,
    ) -> AsyncIterator[pb.ScoreStreamResponse]:
        """Score streamed recorded cases, each with its test's assertions, concurrently."""
        self._preflight(suite, generating=False)
        observer, cap = self._observer, self._settings.max_reason_chars
        jobs: dict[tuple[int, int, str], tuple[Group, GenerationJob]] = {}
        for g in suite.groups():
            for job in g.jobs:
                test, _, prompt, provider = combination_of(job)
                jobs[(test, prompt, provider)] = (g, job)
        concurrency = min(suite.settings.effective_concurrency, self._settings.max_concurrency)
        slots = asyncio.Semaphore(concurrency)
        out: asyncio.Queue[pb.ScoreStreamResponse | BaseException | None] = asyncio.Queue()
        tasks: set[asyncio.Task[None]] = set()

        async def one(req: pb.StreamCase, group: Group, job: GenerationJob) -> None:
            try:
                try:
                    caps = group.plan.whole_text_caps
                    _output_limit(req.output.text, "case.output", caps, self._settings)
                except LimitExceeded as err:
                    # as for any streamed case: an answer of error scores, the stream goes on
                    error = Score.fail_with_error(ErrorCode.INVALID_INPUT, err.message)
                    result = CaseResult(0, req.sample.id, [error for _ in group.plan.checks])
                else:
                    case = Case(job.sample, wire.output_from_pb(req.output))
                    result = await score_case(group.plan, case, ctx)
                    if observer is not None:
                        observer.observe_results(group.plan, (result,))
                scores = wire.scores_to_pb(group.plan.checks, result.scores, max_reason_chars=cap)
                await out.put(
                    pb.ScoreStreamResponse(
                        request_id=req.request_id, scores=scores, passed=result.passed
                    )
                )
            except BaseException as err:
                await out.put(err)
            finally:
                slots.release()

        async def read() -> None:
            try:
                async for msg in requests:
                    if msg.WhichOneof("message") != "case":
                        raise SpecError.at("config", "config is allowed only in the first message")
                    c = msg.case
                    violations: list[FieldViolation] = []
                    found = resolve_combination(
                        suite, CaseKey(c.test, c.prompt, c.provider), "case", violations
                    )
                    if found is None:
                        raise SpecError(violations)
                    await slots.acquire()
                    t = asyncio.create_task(one(c, *jobs[found]))
                    tasks.add(t)
                    t.add_done_callback(tasks.discard)
                while tasks:
                    await asyncio.gather(*list(tasks), return_exceptions=True)
                await out.put(None)
            except BaseException as err:
                await out.put(err)

        reader = asyncio.create_task(read())
        try:
            while True:
                item = await out.get()
                if item is None:
                    break
                if isinstance(item, BaseException):
                    raise item
                yield item
        finally:
            for t in (reader, *tasks):
                t.cancel()
            await asyncio.gather(reader, *tasks, return_exceptions=True)


def _recorded(job: GenerationJob) -> bool:
    return isinstance(job.source, Recorded)


def _outcome(jr: JobResult) -> str:
    if jr.produced.error is not None:
        return "error"
    return "cached" if jr.produced.cached else "generated"


def _result(writer: CheckllmResults, jr: JobResult, provider_at: dict[str, int]) -> bytes:
    """One finished combination, written as the workers write theirs (`provider_at`:
    each provider's position in the document)."""
    test, _, prompt, provider = combination_of(jr.job)
    number = writer.suite.combination_number(test, prompt, provider_at[provider])
    produced = None if _recorded(jr.job) else jr.produced
    return writer.result(number, jr.result, produced)
