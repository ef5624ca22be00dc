"""Runs whose outputs are produced first: a provider call, an HTTP target, or recorded.

A run is a list of `Group`s, each a plan (its checks) and the `GenerationJob`s scored with it:
a checkllm file has one group per test (each test has its own assertions), an
evalstone suite one group. Every job yields exactly one `JobResult`: its output is
produced (`Generator.produce`), then scored with its group's plan. A job whose output
could not be produced gets an error score for every check of its group (never a
pass), so the failure counts toward the gate's error rate.

Provider calls spend the run's `Budget` (the one judge calls spend): a budgeted call is
sent with a completion limit (`max_tokens`), reserves its ceiling (the whole prompt and
all of that limit at the model's price) first, and is refused with BUDGET_EXHAUSTED once
the ceiling no longer fits. A budgeted call to a model without a price is refused with
UNPRICED_MODEL unless the settings give a fallback price or allow unpriced calls; usage
reported beyond those bounds (or negative) fails the generation, charged its ceiling.
With `cache=True`, identical calls (same provider, same prompt) within a run are made
once and shared; the copies are `cached` and cost nothing. A `shared_cache` (the
generation cache, `scorewire.generation.output_cache`) extends that across runs and replicas:
a stored answer of the same tenant is used instead of a call. A `deadline`
(`time.monotonic()` value) bounds every call: none starts after it, and each call's
timeout ends by it.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncGenerator, AsyncIterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from opentelemetry import trace
from scorewire.core import tracing
from scorewire.core.context import CheckContext
from scorewire.core.model import ErrorCode, Output, Sample, Score, ScoreError
from scorewire.engine.runner import Case, CaseResult, Plan, score_case, score_case_sync
from scorewire.engine.spec import CheckSpec
from scorewire.engine.summary import CheckTotals, SummaryBuilder
from scorewire.generation.output_cache import CachedAnswer, generation_key
from scorewire.generation.providers import (
    ANTHROPIC_MAX_TOKENS,
    BUDGETED_MAX_TOKENS,
    GENERATION_ERROR,
    Provider,
    ProviderError,
)
from scorewire.generation.targets import HttpTarget, call_http
from scorewire.judge.budget import Budget, BudgetUnavailable
from scorewire.judge.cache import VerdictCache
from scorewire.judge.pricing import PriceTable, prompt_token_bound, usage_problem

DEFAULT_GENERATION_TIMEOUT_S = 120.0
"""Seconds one provider or HTTP-target call may take."""

_YIELD_EVERY = 128


@dataclass(frozen=True, slots=True)
class Recorded:
    """The output is given."""

    output: Output


@dataclass(frozen=True, slots=True)
class ProviderCall:
    """The output is `provider`'s answer to `prompt`."""

    provider: str
    prompt: str


@dataclass(frozen=True, slots=True)
class HttpCall:
    """The output is an HTTP target's reply to the request built from `values`."""

    target: HttpTarget
    values: Mapping[str, Any]


Source = Recorded | ProviderCall | HttpCall


@dataclass(slots=True)
class GenerationJob:
    """One case to produce and score."""

    sample: Sample
    source: Source
    provider: str = "recorded"
    """`backend:model`, `http`, or `recorded`: what produced the output."""
    prompt: str | None = None
    """The rendered prompt, when a prompt was sent."""
    index: int = 0
    """Position in the run (result files keep this order)."""


@dataclass(slots=True)
class Group:
    """Jobs sharing one plan."""

    name: str
    plan: Plan
    jobs: list[GenerationJob]
    specs: list[CheckSpec] = field(default_factory=list)
    """The plan's checks as specs (sent to a server); empty when the plan came from YAML."""
    description: str = ""


class Produced:
    """An output, or why there is none, with what producing it cost."""

    __slots__ = ("cached", "cost_usd", "error", "latency_ms", "output", "unpriced")

    def __init__(
        self,
        output: Output | None,
        *,
        error: ScoreError | None = None,
        cost_usd: float = 0.0,
        unpriced: bool = False,
        latency_ms: float = 0.0,
        cached: bool = False,
    ) -> None:
        self.output = output
        self.error = error
        self.cost_usd = cost_usd
        self.unpriced = unpriced
        self.latency_ms = latency_ms
        self.cached = cached

    @classmethod
    def failed(cls, code: str, message: str, *, latency_ms: float = 0.0) -> Produced:
        """No output: `code` and `message` go on every score of the case."""
        return cls(None, error=ScoreError(code, message), latency_ms=latency_ms)


class GenerationStats:
    """Totals of what producing outputs did in one run."""

    __slots__ = ("cached", "calls", "cost_usd", "failures", "saved_usd", "unpriced_calls")

    def __init__(self) -> None:
        self.calls = 0
        self.failures = 0
        self.cost_usd = 0.0
        self.unpriced_calls = 0
        self.cached = 0
        self.saved_usd = 0.0


class Generator:
    """Produces outputs: provider calls (budgeted, shared when identical), HTTP calls."""

    def __init__(
        self,
        providers: Mapping[str, Provider],
        *,
        budget: Budget | None = None,
        prices: PriceTable | None = None,
        cache: bool = True,
        timeout_s: float = DEFAULT_GENERATION_TIMEOUT_S,
        max_tokens: int = BUDGETED_MAX_TOKENS,
        shared_cache: VerdictCache | None = None,
        tenant: str | None = None,
        deadline: float | None = None,
    ) -> None:
        self._providers = dict(providers)
        self._shared = shared_cache if cache else None
        self._tenant = tenant
        self._deadline = deadline
        self._max_tokens = max_tokens
        self._budget = budget
        self._prices = prices or PriceTable()
        self._cache = cache
        self._timeout_s = timeout_s
        self._flights: dict[tuple[str, str], asyncio.Task[Produced]] = {}
        self.stats = GenerationStats()
        """What the run's generation cost and saved."""

    async def aclose(self) -> None:
        """Cancel calls in flight and close every provider's client."""
        tasks = [t for t in self._flights.values() if not t.done()]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        for provider in self._providers.values():
            await provider.aclose()

    async def produce(self, source: Source) -> Produced:
        """The output for `source`; failures are a `Produced` with an error, never raised."""
        if isinstance(source, Recorded):
            return Produced(source.output)
        if isinstance(source, HttpCall):
            return await self._http(source)
        return await self._provider_call(source)

    async def _http(self, source: HttpCall) -> Produced:
        start = time.perf_counter()
        self.stats.calls += 1
        try:
            output = await call_http(source.target, source.values)
        except ProviderError as err:
            self.stats.failures += 1
            return Produced.failed(GENERATION_ERROR, err.message, latency_ms=_ms(start))
        return Produced(output, latency_ms=_ms(start))

    async def _provider_call(self, source: ProviderCall) -> Produced:
        key = (source.provider, source.prompt)
        task = self._flights.get(key) if self._cache else None
        if task is not None:
            shared = await asyncio.shield(task)
            if shared.error is not None:
                return shared
            self.stats.cached += 1
            self.stats.saved_usd += shared.cost_usd
            return Produced(shared.output, cached=True)
        task = asyncio.get_running_loop().create_task(self._call(source))
        self._flights[key] = task
        try:
            produced = await asyncio.shield(task)
        except asyncio.CancelledError:
            task.cancel()
            raise
        if produced.error is not None and self._flights.get(key) is task:
            del self._flights[key]  # failures are not kept: a later identical job retries
        return produced

    async def _call(self, source: ProviderCall) -> Produced:
        if not tracing.ENABLED:
            return await self._generate(source)
        with tracing.span(f"generate {source.provider}", client=True) as current:
            produced = await self._generate(source)
            tracing.set_attributes(
                current,
                cost_usd=produced.cost_usd,
                error_type=produced.error.code if produced.error is not None else None,
            )
            return produced

    async def _generate(self, source: ProviderCall) -> Produced:
        provider = self._providers.get(source.provider)
        if provider is None:
            return Produced.failed(GENERATION_ERROR, f"provider {source.provider} is not set up")
        model = provider.ref.model
        free = provider.ref.backend == "echo"
        budgeted = self._budget is not None and not free
        max_tokens = self._max_tokens if budgeted else None
        timeout_s = self._timeout_s
        if self._deadline is not None:
            timeout_s = min(timeout_s, self._deadline - time.monotonic())
            if timeout_s <= 0:
                return Produced.failed(
                    ErrorCode.DEADLINE_EXCEEDED,
                    "the deadline expired before the output was generated",
                )
        key = None
        if self._shared is not None and not free:
            key = generation_key(
                source.provider, source.prompt, max_tokens=max_tokens, tenant=self._tenant
            )
            hit = await self._shared.get(key)
            if hit is not None and hit.tenant == self._tenant:
                self.stats.cached += 1
                saved = self._prices.cost(model, hit.input_tokens or 0, hit.output_tokens or 0)
                self.stats.saved_usd += saved or 0.0
                return Produced(Output(text=hit.text), cached=True)
        prompt_bound = prompt_token_bound(source.prompt)
        reservation = None
        if budgeted and self._budget is not None:
            price = self._prices.price(model)
            if price is None:
                refusal = self._prices.unpriced_refusal(model, "provider")
                if refusal is not None:
                    return Produced.failed(ErrorCode.UNPRICED_MODEL, refusal)
            ceiling = 0.0 if price is None else price.ceiling(prompt_bound, self._max_tokens)
            try:
                reservation = await self._budget.reserve(ceiling)
            except BudgetUnavailable as err:
                return Produced.failed(ErrorCode.BUDGET_UNAVAILABLE, str(err))
            if reservation is None:
                return Produced.failed(
                    ErrorCode.BUDGET_EXHAUSTED,
                    "budget exhausted: no money left to generate this output",
                )
        start = time.perf_counter()
        self.stats.calls += 1
        cost: float | None = None
        try:
            generated = await provider.generate(
                source.prompt, timeout_s=timeout_s, max_tokens=max_tokens
            )
        except ProviderError as err:
            self.stats.failures += 1
            if reservation is not None and self._budget is not None:
                self._budget.release(reservation)
            return Produced.failed(GENERATION_ERROR, err.message, latency_ms=_ms(start))
        except BaseException:
            if reservation is not None and self._budget is not None:
                self._budget.release(reservation)
            raise
        limit = max_tokens
        if limit is None and provider.ref.backend == "anthropic":
            limit = ANTHROPIC_MAX_TOKENS
        problem = usage_problem(
            generated.input_tokens,
            generated.output_tokens,
            prompt_bound=prompt_bound,
            max_tokens=limit,
        )
        if free:
            cost = 0.0
        elif problem is None and None not in (generated.input_tokens, generated.output_tokens):
            cost = self._prices.cost(
                model, generated.input_tokens or 0, generated.output_tokens or 0
            )
        if reservation is not None and self._budget is not None:
            # unknown or impossible usage of a priced model is charged the ceiling (never
            # a refund); an allowed unpriced call is counted apart
            priced = self._prices.price(model) is not None
            charge = cost if cost is not None or not priced else reservation.amount
            self._budget.settle(reservation, charge)
        if problem is not None:
            self.stats.failures += 1
            return Produced.failed(
                GENERATION_ERROR, f"{source.provider}: {problem}", latency_ms=_ms(start)
            )
        if cost is None:
            self.stats.unpriced_calls += 1
        else:
            self.stats.cost_usd += cost
        if key is not None and self._shared is not None:
            answer = CachedAnswer(
                generated.text, generated.input_tokens, generated.output_tokens, self._tenant
            )
            await self._shared.set(key, answer)
        if tracing.ENABLED:
            tracing.set_attributes(
                trace.get_current_span(),
                **{
                    tracing.OPERATION: "chat",
                    tracing.PROVIDER: provider.ref.backend,
                    tracing.REQUEST_MODEL: model,
                },
                input_tokens=generated.input_tokens,
                output_tokens=generated.output_tokens,
            )
        return Produced(
            Output(text=generated.text),
            cost_usd=cost or 0.0,
            unpriced=cost is None,
            latency_ms=_ms(start),
        )


def _ms(start: float) -> float:
    return (time.perf_counter() - start) * 1000.0


class JobResult:
    """One job's output (or why there is none) and its scores."""

    __slots__ = ("group", "job", "produced", "result")

    def __init__(
        self, group: Group, job: GenerationJob, produced: Produced, result: CaseResult
    ) -> None:
        self.group = group
        self.job = job
        self.produced = produced
        self.result = result

    @property
    def names(self) -> list[str]:
        """Check names, aligned with `result.scores`."""
        return self.group.plan.names

    @property
    def types(self) -> list[str]:
        """Check types, aligned with `result.scores`."""
        return [c.type for c in self.group.plan.checks]


def unproduced_result(plan: Plan, job: GenerationJob, produced: Produced) -> CaseResult:
    """Every check of the plan scores the production error (never a pass)."""
    assert produced.error is not None
    scores = [
        Score.fail_with_error(produced.error.code, produced.error.message) for _ in plan.checks
    ]
    return CaseResult(job.index, job.sample.id, scores)


async def produce_and_score(
    group: Group, job: GenerationJob, generator: Generator, ctx: CheckContext
) -> JobResult:
    """Produce one job's output and score it with its group's plan."""
    produced = await generator.produce(job.source)
    if produced.output is None:
        return JobResult(group, job, produced, unproduced_result(group.plan, job, produced))
    result = await score_case(group.plan, Case(job.sample, produced.output, job.index), ctx)
    return JobResult(group, job, produced, result)


async def run_groups(
    groups: Sequence[Group],
    generator: Generator,
    ctx: CheckContext,
    *,
    concurrency: int = 16,
) -> AsyncIterator[JobResult]:
    """Produce and score every job, at most `concurrency` at once, in completion order.

    Closing the iterator early (Ctrl-C) cancels the jobs in flight, which stops their
    provider and judge calls.
    """
    if concurrency < 1:
        raise ValueError("concurrency must be at least 1")
    work = [(g, j) for g in groups for j in g.jobs]
    inner = _bounded(work, generator, ctx, concurrency)
    try:
        async for item in inner:
            yield item
    finally:
        await inner.aclose()


async def _bounded(
    work: list[tuple[Group, GenerationJob]],
    generator: Generator,
    ctx: CheckContext,
    concurrency: int,
) -> AsyncGenerator[JobResult, None]:
    pending: set[asyncio.Task[JobResult]] = set()
    todo = iter(work)
    inline = 0
    try:
        while True:
            while len(pending) < concurrency:
                item = next(todo, None)
                if item is None:
                    break
                group, job = item
                if isinstance(job.source, Recorded) and not group.plan.any_async:
                    # Recorded outputs and plain checks: scored inline, no task per case.
                    case = Case(job.sample, job.source.output, job.index)
                    result = score_case_sync(group.plan, case, ctx)
                    yield JobResult(group, job, Produced(job.source.output), result)
                    inline += 1
                    if inline % _YIELD_EVERY == 0:
                        await asyncio.sleep(0)
                    continue
                pending.add(asyncio.create_task(produce_and_score(group, job, generator, ctx)))
            if not pending:
                return
            done, pending = await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
            for task in done:
                yield task.result()
    finally:
        for task in pending:
            task.cancel()
        if pending:
            await asyncio.gather(*pending, return_exceptions=True)


async def produce_all(
    groups: Sequence[Group], generator: Generator, *, concurrency: int = 16
) -> AsyncIterator[tuple[Group, GenerationJob, Produced]]:
    """Produce every job's output without scoring it (the scoring happens on a server)."""
    sem = asyncio.Semaphore(concurrency)

    async def one(group: Group, job: GenerationJob) -> tuple[Group, GenerationJob, Produced]:
        async with sem:
            return group, job, await generator.produce(job.source)

    tasks = [asyncio.create_task(one(g, j)) for g in groups for j in g.jobs]
    try:
        for next_done in asyncio.as_completed(tasks):
            yield await next_done
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)


class GroupedSummaryBuilder(SummaryBuilder):
    """A SummaryBuilder over results whose checks differ by group, totalled by check name.

    Checks of the same name in different groups (the `contains` of two tests) add up
    under one name; within a case, two checks of one name both count.
    """

    def __init__(self) -> None:
        super().__init__((), ())
        self._by_name: dict[str, CheckTotals] = {}

    def declare(self, names: Sequence[str], types: Sequence[str]) -> None:
        """List checks up front, so totals keep plan order rather than completion order."""
        for name, ctype in zip(names, types, strict=True):
            self._totals_for(name, ctype)

    def _totals_for(self, name: str, ctype: str) -> CheckTotals:
        t = self._by_name.get(name)
        if t is None:
            t = self._by_name[name] = CheckTotals(name, ctype)
            self._totals.append(t)
        return t

    def merge(self, other: SummaryBuilder) -> None:
        """Add the counts of another builder (a group's, or a scoring worker's grouped
        builder of its chunk), check by check name: it saw only some of the run's groups."""
        self.cases += other.cases
        self.cases_passed += other.cases_passed
        for o in other._totals:
            self._totals_for(o.name, o.type).add(o)

    def add_named(self, result: CaseResult, names: Sequence[str], types: Sequence[str]) -> None:
        """Count one case whose scores are aligned with `names` and `types`."""
        self.cases += 1
        if result.passed:
            self.cases_passed += 1
        for name, ctype, s in zip(names, types, result.scores, strict=True):
            self._totals_for(name, ctype).count(s)
