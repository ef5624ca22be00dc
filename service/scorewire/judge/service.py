"""The judge service: what goes on `CheckContext.judge`.

One `ask` does, in order:
1. route the model (`backend:model`, the default, or `auto` by credentials present);
2. join an identical request already in flight (same cache key) instead of making one;
3. look the verdict up in the cache (cost 0, `cached`), unless another tenant paid for
   it (see below);
4. reserve the call's ceiling (the whole prompt and all of `max_tokens` at the model's
   price) from the run's budget and the server-wide budget, or refuse with
   BUDGET_EXHAUSTED; a budgeted call to a model without a price is refused with
   UNPRICED_MODEL unless the settings give a fallback price or allow unpriced calls;
5. call the backend under its concurrency limit, retrying 429/5xx/timeouts with
   backoff and Retry-After, bounded by the request deadline;
6. check the reported usage (negative or beyond the ceiling's bounds is a JUDGE_ERROR
   charged at the ceiling, never a refund), price the tokens, settle the budgets,
   parse the verdict strictly and cache it, with the paying tenant, only when it parsed.
   A priced call whose upstream reported no usage is charged its ceiling, and its score
   says so: `cost_usd` is that ceiling, with a note that it is an upper bound.

Everything the upstream sends back (answers, refusals, error details) is scrubbed of
credentials (`scorewire.core.secrets`) before it reaches a reason.

Tenants share the cache, but not the knowledge of each other's work: unless the
settings say tenants trust each other, a hit on a verdict another tenant paid for is
answered as if the call had been made (not `cached`, the cost the call would have had,
charged to this caller's budgets, the server's budget untouched since no money left);
the saving shows in the metrics only. Identical requests in flight are shared only
within one tenant for the same reason.

Cancelling every check waiting on a request cancels the request itself.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import hashlib
import itertools
import logging
import math
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, TypeVar, cast

from opentelemetry import trace
from scorewire.core import tracing
from scorewire.core.context import CheckContext, Extraction
from scorewire.core.model import ErrorCode, Output, Sample
from scorewire.core.secrets import scrub
from scorewire.judge.answers import BUDGET_EXHAUSTED, Answer, Question
from scorewire.judge.backends.base import BackendError, Completion, JudgeBackend
from scorewire.judge.budget import Budget, BudgetUnavailable, PeriodBudget, Reservation
from scorewire.judge.cache import VerdictCache
from scorewire.judge.cache_entry import CachedAnswer, verdict_key
from scorewire.judge.models import DEFAULT_MODELS, ModelRef, parse_model
from scorewire.judge.pricing import PriceTable, prompt_token_bound, usage_problem
from scorewire.judge.prompts import ExampleLike, render_extract
from scorewire.judge.redis_url import parse_redis_url, redis_client
from scorewire.judge.retry import RetryPolicy
from scorewire.judge.routing import (
    HINTS,
    Hint,
    endpoints_from_settings,
    judge_problem,
    no_judge_message,
    not_configured_message,
    resolve,
)
from scorewire.judge.shared import Ledger, SharedBudget, VerdictLeases
from scorewire.judge.stats import JudgeStats
from scorewire.judge.verdict import ExtractVerdict, VerdictError, parse_extraction
from scorewire.settings import Settings

log = logging.getLogger(__name__)

T = TypeVar("T")


class _Outcome:
    """The shared result of one flight: a parsed verdict or an error, and its cost."""

    __slots__ = (
        "ceiling_cost",
        "cost_usd",
        "error_code",
        "error_message",
        "from_cache",
        "unpriced",
        "value",
    )  # fmt: skip

    def __init__(
        self,
        value: Any = None,
        *,
        error_code: str | None = None,
        error_message: str = "",
        cost_usd: float = 0.0,
        unpriced: bool = False,
        from_cache: bool = False,
        ceiling_cost: bool = False,
    ) -> None:
        self.value = value
        self.error_code = error_code
        self.error_message = error_message
        self.cost_usd = cost_usd
        self.unpriced = unpriced
        self.from_cache = from_cache
        self.ceiling_cost = ceiling_cost


class _Flight:
    """One request in flight, shared by every check asking the same question."""

    __slots__ = (
        "budget",
        "deadline",
        "held",
        "lease",
        "outcome",
        "store",
        "task",
        "tenant",
        "woken",
    )  # fmt: skip

    def __init__(
        self,
        deadline: float | None,
        budget: Budget | None,
        tenant: str | None,
        held: Held | None = None,
    ) -> None:
        self.task: asyncio.Task[_Outcome] | None = None
        self.woken: list[asyncio.Future[_Outcome]] = []
        """One future per check waiting, resolved by the flight's task as it ends."""
        self.deadline = deadline
        self.budget = budget
        self.tenant = tenant
        self.held = held
        """Money reserved for this call before it was asked (`JudgeService.prepay`)."""
        self.lease: str | None = None
        """The single-flight lease this flight holds until its verdict is stored."""
        self.store: CachedAnswer | None = None
        """The verdict to store once the waiting checks have it (`JudgeService._fly`)."""
        self.outcome: _Outcome | None = None
        """The flight's outcome, once known (a check joining while it is stored takes it)."""

    def join(self, deadline: float | None) -> None:
        """Extend the deadline to the latest of the waiters' (None means unbounded)."""
        if self.deadline is not None:
            self.deadline = None if deadline is None else max(self.deadline, deadline)

    def remaining(self) -> float | None:
        return None if self.deadline is None else self.deadline - time.monotonic()


Held = list[tuple[Budget, Reservation]]
"""Reservations held for one judge call, one per budget it is charged to."""


def _wake(flight: _Flight, outcome: _Outcome) -> None:
    """Hand `outcome` to every check waiting on `flight` that does not have it yet."""
    for woken in flight.woken:
        if not woken.done():
            woken.set_result(outcome)


def _wake_failed(flight: _Flight, err: BaseException) -> None:
    """End the wait of every check on `flight` that ended without an outcome: cancelled
    with it, or raising what it raised."""
    for woken in flight.woken:
        if not woken.done():
            if isinstance(err, asyncio.CancelledError):
                woken.cancel()
            else:
                woken.set_exception(err)


class _CallFailed(Exception):
    def __init__(self, message: str, code: str = ErrorCode.JUDGE_ERROR) -> None:
        super().__init__(message)
        self.message = message
        self.code = code


class JudgeService:
    """Judge calls with routing, caching, single flight, budgets, pricing and retries.

    Build it with `JudgeService.from_settings(settings)`, put it on
    `CheckContext.judge`, and `await svc.aclose()` at shutdown. A run's budget goes on
    `CheckContext.budget` as a `scorewire.judge.Budget`.
    """

    def __init__(
        self,
        *,
        backends: Mapping[str, JudgeBackend],
        cache: VerdictCache,
        default_model: ModelRef | None = None,
        prices: PriceTable | None = None,
        stats: JudgeStats | None = None,
        temperature: float = 0.0,
        timeout_s: float = 60.0,
        retry: RetryPolicy | None = None,
        concurrency: int = 32,
        server_budget: Budget | None = None,
        tenants_trust_each_other: bool = False,
        ledger: Ledger | None = None,
        leases: VerdictLeases | None = None,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        hints: Mapping[str, Hint] | None = None,
    ) -> None:
        self._backends = dict(backends)
        self._cache = cache
        self._default = default_model or ModelRef(None, None)
        self.prices = prices or PriceTable()
        """The price table in use."""
        self.stats = stats or JudgeStats()
        """Counters of calls, tokens, dollars, cache traffic and retries."""
        self._temperature = temperature
        self._timeout_s = timeout_s
        self._retry = retry or RetryPolicy()
        # Keyed by the backend's own name (`gemini` when the OpenAI slot points there).
        self._limits = {b.name: asyncio.Semaphore(concurrency) for b in self._backends.values()}
        self._hints = dict(hints or HINTS)
        self.server_budget = server_budget
        """The server-wide budget per period, or None."""
        self.tenants_trust_each_other = tenants_trust_each_other
        """Whether a cache hit on another tenant's verdict may be reported as `cached`."""
        self.ledger = ledger
        """Where shared budgets live (Redis), or None: budgets are per process."""
        self._leases = leases
        # The cache and the leases on one Redis client: two round trips per call, not four.
        self._fused = leases is not None and cache.shares(leases.client)
        self._sleep = sleep
        self._flights: dict[str, _Flight] = {}
        self.use_cache = True
        """Whether verdicts are read from and written to the cache (`scorewire run
        --no-cache` turns it off, with `share_calls`: every check makes its own call)."""
        self.share_calls = True
        """Whether identical questions in flight share one call."""
        self._calls = itertools.count()

    @classmethod
    def from_settings(cls, settings: Settings, *, gemini: bool = False) -> JudgeService:
        """Build backends, cache, prices and budgets from settings (credentials from env).

        `gemini`: the OpenAI-compatible backend is Gemini's endpoint, built from the
        Gemini settings only (`scorewire.judge.routing`). Raises ValueError for an
        unusable `judge_model` or `cache_url`.
        """
        stats = JudgeStats()
        backends: dict[str, JudgeBackend] = {}
        slots, hints = endpoints_from_settings(settings, gemini=gemini)
        openai_slot = slots.get("openai")
        if openai_slot is not None:
            from scorewire.judge.backends.openai_backend import OpenAIBackend

            # Local OpenAI-compatible servers (vLLM, Ollama) need no key, but the SDK
            # insists on one.
            backends["openai"] = OpenAIBackend(
                api_key=openai_slot.api_key or "unused",
                base_url=openai_slot.base_url,
                name=openai_slot.name,
                connections=settings.judge_concurrency,
            )
        anthropic_slot = slots.get("anthropic")
        if anthropic_slot is not None and anthropic_slot.api_key:
            from scorewire.judge.backends.anthropic_backend import AnthropicBackend

            backends["anthropic"] = AnthropicBackend(
                api_key=anthropic_slot.api_key,
                base_url=anthropic_slot.base_url,
                connections=settings.judge_concurrency,
            )
        shared = _shared_client(settings)
        cache = VerdictCache.from_url(
            settings.cache_url,
            stats=stats,
            ttl_s=settings.cache_ttl_s or None,
            timeout_s=settings.cache_timeout_s,
            backoff_s=settings.cache_backoff_s,
            pool_size=settings.cache_pool_size,
            tls_ca=settings.redis_tls_ca,
            redis=shared,
            memory_bytes=settings.cache_memory_bytes,
            tenant_max_bytes=settings.cache_tenant_max_bytes,
            evictions_per_store=settings.cache_tenant_evictions_per_store,
        )
        ledger, leases = _shared_state(settings, stats, shared)
        server_budget: Budget | None = None
        if settings.judge_budget_usd is not None:
            server_budget = (
                SharedBudget(
                    ledger,
                    "server",
                    settings.judge_budget_usd,
                    period_s=settings.judge_budget_period_s,
                )
                if ledger is not None
                else PeriodBudget(settings.judge_budget_usd, settings.judge_budget_period_s)
            )
        return cls(
            backends=backends,
            cache=cache,
            default_model=parse_model(settings.judge_model),
            prices=PriceTable.from_settings(settings),
            stats=stats,
            temperature=settings.judge_temperature,
            timeout_s=settings.judge_timeout_s,
            retry=RetryPolicy(
                max_retries=settings.judge_max_retries,
                base_s=settings.judge_retry_base_s,
                max_s=settings.judge_retry_max_s,
            ),
            concurrency=settings.judge_concurrency,
            server_budget=server_budget,
            tenants_trust_each_other=settings.tenants_trust_each_other,
            ledger=ledger,
            leases=leases,
            hints=hints,
        )

    @property
    def flying(self) -> int:
        """Judge calls in progress, their verdicts' stores in the cache included."""
        return len(self._flights)

    @property
    def cache(self) -> VerdictCache:
        """The verdict cache."""
        return self._cache

    async def aclose(self) -> None:
        """Cancel requests in flight and close the HTTP clients and the cache."""
        tasks = [f.task for f in self._flights.values() if f.task is not None]
        self._flights.clear()
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        for backend in self._backends.values():
            await backend.aclose()
        await self._cache.aclose()
        if self.ledger is not None:
            await self.ledger.aclose()

    # --- routing ---------------------------------------------------------------------------

    def describe(self, ref: ModelRef | None = None) -> str:
        """`backend:model` that `ref` (default: the default model) routes to, or why none."""
        route = self._route(ref or ModelRef(None, None))
        return route if isinstance(route, str) else f"{route[0].name}:{route[1]}"

    def _route(self, ref: ModelRef) -> tuple[JudgeBackend, str] | str:
        slot, model = resolve(ref, default=self._default, configured=self._backends)
        if slot is None:
            return no_judge_message(self._hints)
        backend = self._backends.get(slot)
        if backend is None:
            # Not retried, and not reaching the network: there is nothing to call.
            return not_configured_message(slot, self._hints)
        return backend, model or DEFAULT_MODELS[slot]

    def preflight(
        self, model: str, *, budgeted: bool, credentials: bool = True
    ) -> tuple[str, str, str] | None:
        """Why a check naming judge `model` (`""`: the default) cannot be judged by this
        service, as (kind, setting, message), or None (`routing.judge_problem`)."""
        return judge_problem(
            model,
            configured=self._backends,
            default=self._default,
            prices=self.prices,
            hints=self._hints,
            budgeted=budgeted,
            credentials=credentials,
        )

    # --- asking ------------------------------------------------------------------------------

    def _key(self, backend: JudgeBackend, model: str, question: Question[Any]) -> str:
        return verdict_key(
            question.prompt,
            backend=backend.name,
            model=model,
            temperature=self._temperature_of(question),
            max_tokens=question.max_tokens,
            sample=question.sample,
        )

    def _temperature_of(self, question: Question[Any]) -> float:
        return self._temperature if question.temperature is None else question.temperature

    async def prepay(
        self, ctx: CheckContext, questions: Sequence[Question[Any]]
    ) -> list[Held | None] | Answer[Any]:
        """Reserve, all or none, the ceiling of every question whose verdict is not cached.

        A check that asks several questions for one score (repeated samples, both orders)
        calls this first, so that a budget that cannot pay for all of them refuses before
        the first call instead of after paying for some. Returns one hold per question
        (None where the cache already holds this tenant's verdict) to pass to `ask`, or
        the refusal as a failed Answer. Holds `ask` did not use are given back by
        `release`.
        """
        budget = _run_budget(ctx)
        budgets = [b for b in (budget, self.server_budget) if b is not None]
        route = self._route(questions[0].model) if questions else None
        if all(_unlimited(b) for b in budgets) or route is None or isinstance(route, str):
            # nothing can refuse: each call reserves its own, with no cache peek first
            return [None] * len(questions)
        backend, model = route
        misses: list[int] = []
        for i, question in enumerate(questions):
            hit = await self._cache.peek(self._key(backend, model, question))
            if hit is None or not (self.tenants_trust_each_other or hit.tenant == ctx.tenant):
                misses.append(i)
        holds: list[Held | None] = [None] * len(questions)
        if not misses:
            return holds
        ceilings = [self._ceiling(model, questions[i]) for i in misses]
        held = await self._reserve_many(budget, model, questions[misses[0]], ceilings)
        if isinstance(held, _Outcome):
            return _answer(held, cached=False)
        for i, h in zip(misses, held, strict=True):
            holds[i] = h
        return holds

    @staticmethod
    def release(holds: Sequence[Held | None]) -> None:
        """Give back what `prepay` held and no call used (settled holds are left alone)."""
        for held in holds:
            for b, r in held or ():
                b.release(r)

    async def ask(
        self, ctx: CheckContext, question: Question[T], *, held: Held | None = None
    ) -> Answer[T]:
        """Get a verdict for `question`, from the cache, a shared call, or a new call.

        `held` is money `prepay` reserved for this call; a call that is made settles it
        instead of reserving anew.

        Traced as one `judge <model>` span (model, cost, cached, tokens when this ask
        made the call, and a `gen_ai.evaluation.result` event with the verdict's score);
        each upstream HTTP attempt is a `chat <model>` client span inside it.
        """
        route = self._route(question.model)
        if isinstance(route, str):
            return Answer(None, error_code=ErrorCode.JUDGE_ERROR, error_message=route)
        backend, model = route
        if not tracing.ENABLED:
            return await self._ask(ctx, question, backend, model, held)
        attributes = {tracing.PROVIDER: backend.name, tracing.REQUEST_MODEL: model}
        with tracing.span(f"judge {model}", attributes) as current:
            answer = await self._ask(ctx, question, backend, model, held)
            tracing.set_attributes(
                current,
                cost_usd=answer.cost_usd,
                cached=answer.cached,
                error_type=answer.error_code,
            )
            if answer.error_code is None:
                _evaluation_event(current, question, answer.value)
            return answer

    async def _ask(
        self,
        ctx: CheckContext,
        question: Question[T],
        backend: JudgeBackend,
        model: str,
        held: Held | None,
    ) -> Answer[T]:
        key = self._key(backend, model, question)
        budget = _run_budget(ctx)
        tenant = ctx.tenant
        # Sharing a call in flight would tell a tenant another one asked the same.
        flight_key = key if self.tenants_trust_each_other else f"{key}\0{tenant or ''}"
        if not self.share_calls:
            flight_key = f"{flight_key}\0{next(self._calls)}"
        while True:
            flight = self._flights.get(flight_key)
            leader = flight is None
            if flight is None:
                flight = self._start(flight_key, key, backend, model, question, ctx, budget, held)
                held = None  # the flight owns it now (a retry below reserves afresh)
            else:
                flight.join(ctx.deadline)
            outcome = await self._wait(flight_key, flight)
            if leader:
                return _answer(outcome, cached=outcome.from_cache)
            if outcome.error_code in _BUDGET_CODES and flight.budget is not budget:
                # Another run's budget refused; ours may still allow the call.
                self._land(flight_key, flight)
                continue
            self.stats.add("shared_calls")
            if outcome.error_code is None and not outcome.from_cache:
                self.stats.add("saved_usd", outcome.cost_usd)
            return Answer(
                outcome.value,
                error_code=outcome.error_code,
                error_message=scrub(outcome.error_message),
                cached=outcome.error_code is None,
            )

    def _start(
        self,
        flight_key: str,
        key: str,
        backend: JudgeBackend,
        model: str,
        question: Question[Any],
        ctx: CheckContext,
        budget: Budget | None,
        held: Held | None = None,
    ) -> _Flight:
        flight = _Flight(ctx.deadline, budget, ctx.tenant, held)
        task = asyncio.get_running_loop().create_task(
            self._fly(flight_key, flight, key, backend, model, question)
        )
        flight.task = task
        self._flights[flight_key] = flight

        def settle(_: asyncio.Task[_Outcome]) -> None:
            # A task cancelled before its first step never ran `_fly`'s own handlers.
            self._land(flight_key, flight)
            _wake_failed(flight, asyncio.CancelledError())

        task.add_done_callback(settle)
        return flight

    async def _fly(
        self,
        flight_key: str,
        flight: _Flight,
        key: str,
        backend: JudgeBackend,
        model: str,
        question: Question[Any],
    ) -> _Outcome:
        """`_resolve` as the flight's task: it leaves `_flights` and hands its outcome to
        every waiting check in its last step.

        A check awaiting the task through `asyncio.shield` heard of it two turns of the
        event loop later (the shield's callback, then the check's), each turn waiting
        behind every ready callback: ~1 ms a judge check at concurrency 32.
        """
        try:
            outcome = await self._resolve(flight, key, backend, model, question)
        except BaseException as err:
            self._land(flight_key, flight)
            _wake_failed(flight, err)
            await self._give_back_lease(flight)
            raise
        flight.outcome = outcome
        _wake(flight, outcome)
        try:
            # The checks have their verdict; now the cache gets it. The flight stays
            # joinable until it is stored, so that a question asked meanwhile shares
            # this call rather than paying for another; and the single-flight lease is
            # given back only with (or after) the store.
            if flight.store is not None:
                await self._store(key, flight)
        finally:
            self._land(flight_key, flight)
            _wake(flight, outcome)  # the checks that joined while it was stored
            await self._give_back_lease(flight)
        return outcome

    async def _store(self, key: str, flight: _Flight) -> None:
        entry, flight.store = flight.store, None
        assert entry is not None
        lease, leases = flight.lease, self._leases
        if self._fused and lease is not None and leases is not None:
            if await self._cache.store_and_release(key, entry, leases.key(lease), leases.token):
                flight.lease = None  # given back with the store
        else:
            await self._cache.set(key, entry)

    async def _give_back_lease(self, flight: _Flight) -> None:
        if flight.lease is not None and self._leases is not None:
            lease, flight.lease = flight.lease, None
            await self._leases.release(lease)

    def _land(self, flight_key: str, flight: _Flight) -> None:
        """A flight that ended is no longer joined: the next ask starts its own."""
        if self._flights.get(flight_key) is flight:
            del self._flights[flight_key]

    async def _wait(self, key: str, flight: _Flight) -> _Outcome:
        task = flight.task
        assert task is not None
        if task.done():
            return task.result()
        if flight.outcome is not None:  # answered; only its store is still under way
            return flight.outcome
        woken: asyncio.Future[_Outcome] = asyncio.get_running_loop().create_future()
        flight.woken.append(woken)
        try:
            return await woken  # cancelling this check cancels `woken`, not the flight
        except asyncio.CancelledError:
            if len(flight.woken) == 1 and not task.done():  # only this check's own
                # The last check waiting went away (its deadline, or a cancelled stream):
                # stop the call rather than pay for a verdict nobody reads, and let it
                # end (its attempt closed, its reservation given back) before the check does.
                task.cancel()
                self._land(key, flight)
                await asyncio.wait((task,))
            raise
        finally:
            with contextlib.suppress(ValueError):
                flight.woken.remove(woken)

    async def _resolve(
        self,
        flight: _Flight,
        key: str,
        backend: JudgeBackend,
        model: str,
        question: Question[Any],
    ) -> _Outcome:
        state = "skipped"
        if self._fused and self.use_cache and self.share_calls:
            state, found = await self._lookup_or_lease(flight, key, model, question)
        else:
            found = await self._from_cache(flight, key, model, question)
        if found is not None:
            return found
        if state == "skipped" and self._leases is not None and self.share_calls:
            flight.lease, found = await self._lease_or_verdict(flight, key, model, question)
            if found is not None:
                return found
        # The lease, if taken, is given back by `_fly`: with the verdict's store.
        return await self._make_call(flight, key, backend, model, question)

    def _lease_id(self, flight: _Flight, key: str) -> str:
        material = key if self.tenants_trust_each_other else f"{key}\0{flight.tenant or ''}"
        return hashlib.sha256(material.encode()).hexdigest()

    async def _lookup_or_lease(
        self, flight: _Flight, key: str, model: str, question: Question[Any]
    ) -> tuple[str, _Outcome | None]:
        """`_from_cache` and, on a miss, the lease, in one Redis round trip (`_fused`).

        Returns (state, the cached verdict or None); the state is the cache's
        (`VerdictCache.lookup_or_lease`): `taken` leaves the lease on the flight, `held`
        goes on to wait for the holder's verdict, `failed` calls without single flight (as
        when taking a lease fails), `skipped` takes the lease the usual way.
        """
        leases = self._leases
        assert leases is not None
        lease = self._lease_id(flight, key)
        try:
            state, hit = await self._cache.lookup_or_lease(
                key, leases.key(lease), leases.token, leases.lease_ms
            )
        except asyncio.CancelledError:  # the script may still take the lease
            leases.give_back_later(lease)
            raise
        if state == "failed":
            leases.failed(lease)
            return state, None
        if state == "taken":
            flight.lease = lease
            return state, None
        if state == "held":
            # Another replica is asking: wait for its verdict as `_lease_or_verdict` does.
            flight.lease, found = await self._lease_or_verdict(
                flight, key, model, question, held=True
            )
            return state, found
        if hit is None:
            return state, None
        found = await self._hit(flight, model, question, hit)
        return ("skipped" if found is None else state), found

    async def _from_cache(
        self,
        flight: _Flight,
        key: str,
        model: str,
        question: Question[Any],
        *,
        count: bool = True,
    ) -> _Outcome | None:
        """The cached verdict as this caller may see it, or None on a miss (or no cache).

        `count=False` (the polls of a lease wait) reads without counting a hit or miss:
        one ask is one miss, however often it polls."""
        if not self.use_cache:
            return None
        hit = await (self._cache.get(key) if count else self._cache.peek(key))
        if hit is None:
            return None
        return await self._hit(flight, model, question, hit)

    async def _hit(
        self, flight: _Flight, model: str, question: Question[Any], hit: CachedAnswer
    ) -> _Outcome | None:
        """A cache entry as this caller may see it, or None when it does not parse."""
        try:
            value = question.parse(scrub(hit.text))  # entries written before scrubbing
        except VerdictError:
            log.warning("verdict cache: unreadable entry ignored")
            return None
        saved = self._cost(model, hit.input_tokens, hit.output_tokens)
        if self.tenants_trust_each_other or hit.tenant == flight.tenant:
            if saved is not None:
                self.stats.add("saved_usd", saved)
            return _Outcome(value, from_cache=True)
        return await self._foreign_hit(flight, model, question, value, hit)

    async def _lease_or_verdict(
        self,
        flight: _Flight,
        key: str,
        model: str,
        question: Question[Any],
        *,
        held: bool = False,
    ) -> tuple[str | None, _Outcome | None]:
        """Single flight across replicas: take the verdict key's lease, or wait for the
        verdict another replica is fetching; after `single_flight_wait_s` (or when Redis
        fails) call anyway, without a lease. `held`: the lease was just found taken
        (`_lookup_or_lease`), so the first attempt to take it is that one.

        Returns (the lease taken, None) or (None, the verdict found) or (None, None).
        """
        leases = self._leases
        assert leases is not None
        lease = self._lease_id(flight, key)
        wait_s = leases.wait_s
        remaining = flight.remaining()
        if remaining is not None:
            wait_s = min(wait_s, max(0.0, remaining))
        give_up = time.monotonic() + wait_s
        waited = False
        while True:
            taken = False if held and not waited else await leases.acquire(lease)
            if taken is None:
                return None, None  # Redis failed: no single flight, but no blocking either
            if taken:
                # The holder may have just finished: its verdict is then in the cache.
                found = (
                    await self._from_cache(flight, key, model, question, count=False)
                    if waited
                    else None
                )
                if found is not None:
                    await leases.release(lease)
                    self.stats.add("remote_shared_calls")
                    return None, found
                return lease, None
            if not waited:
                waited = True
                self.stats.add("lease_waits")
            if time.monotonic() >= give_up:
                self.stats.add("lease_timeouts")
                return None, None
            await asyncio.sleep(leases.poll_s)
            found = await self._from_cache(flight, key, model, question, count=False)
            if found is not None:
                self.stats.add("remote_shared_calls")
                return None, found

    async def _make_call(
        self,
        flight: _Flight,
        key: str,
        backend: JudgeBackend,
        model: str,
        question: Question[Any],
    ) -> _Outcome:
        """Reserve, call the backend, settle, and conclude (parse and cache) one call."""
        bound = _prompt_bound(question)  # the ceiling's and the usage check's (one encode)
        ceiling = self._ceiling(model, question, bound)
        reservations = await self._hold(flight, model, question, ceiling)
        if isinstance(reservations, _Outcome):
            return reservations
        completion: Completion | None = None
        cost: float | None = None
        problem: str | None = None
        try:
            completion = await self._call(flight, backend, model, question)
            problem = usage_problem(
                completion.input_tokens,
                completion.output_tokens,
                prompt_bound=bound,
                max_tokens=question.max_tokens,
            )
            if problem is None:
                cost = self._cost(model, completion.input_tokens, completion.output_tokens)
            if tracing.ENABLED:  # the flight's task runs in the leader's `judge` span
                tracing.set_attributes(
                    trace.get_current_span(),
                    input_tokens=completion.input_tokens,
                    output_tokens=completion.output_tokens,
                )
        except _CallFailed as failed:
            self.stats.add("call_failures", backend=backend.name, model=model)
            return _Outcome(
                error_code=failed.code, error_message=f"judge call failed: {failed.message}"
            )
        finally:
            # A call that produced no answer (failed or cancelled) bills nothing we can
            # see: its reservation is given back rather than settled. One whose cost is
            # unknown (no usage reported, or usage that cannot be true) is charged its
            # ceiling: a budget must not be bypassed by what the upstream says.
            for budget, reservation in reservations:
                if completion is None:
                    budget.release(reservation)
                else:
                    budget.settle(reservation, _charge(cost, ceiling, reservation))
        if problem is not None:
            labels = {"backend": backend.name, "model": model}
            self.stats.add("call_failures", **labels)
            self._count_charge(ceiling, ceiling=True, **labels)
            log.warning("judge %s:%s: %s", backend.name, model, problem)
            return _Outcome(
                error_code=ErrorCode.JUDGE_ERROR,
                error_message=f"judge call failed: {problem}; the call is charged its "
                "ceiling, never refunded",
                cost_usd=ceiling or 0.0,
                unpriced=ceiling is None,
            )
        return await self._conclude(
            key, backend, model, question, completion, cost, ceiling, flight
        )

    async def _foreign_hit(
        self,
        flight: _Flight,
        model: str,
        question: Question[Any],
        value: Any,
        hit: CachedAnswer,
    ) -> _Outcome:
        """Answer a hit on another tenant's verdict exactly as a fresh call would be answered.

        The caller's budgets are held and charged what the call would have cost (so
        neither its score nor its budget gives the hit away); the server's budget is held
        like a call's but charged nothing, since no money left. The saving is counted.
        """
        ceiling = self._ceiling(model, question)
        reservations = await self._hold(flight, model, question, ceiling)
        if isinstance(reservations, _Outcome):
            return reservations
        would_cost = self._cost(model, hit.input_tokens, hit.output_tokens)
        for budget, reservation in reservations:
            if budget is self.server_budget:
                budget.release(reservation)
            else:
                budget.settle(reservation, _charge(would_cost, ceiling, reservation))
        if would_cost is not None:
            self.stats.add("saved_usd", would_cost)
        charged = would_cost if would_cost is not None else ceiling
        return _Outcome(
            value,
            cost_usd=charged or 0.0,
            unpriced=charged is None,
            ceiling_cost=would_cost is None and ceiling is not None,
        )

    async def _conclude(
        self,
        key: str,
        backend: JudgeBackend,
        model: str,
        question: Question[Any],
        completion: Completion,
        cost: float | None,
        ceiling: float | None,
        flight: _Flight,
    ) -> _Outcome:
        labels = {"backend": backend.name, "model": model}
        self.stats.add("answered_calls", 1, **labels)
        self.stats.add("input_tokens", completion.input_tokens or 0, **labels)
        self.stats.add("output_tokens", completion.output_tokens or 0, **labels)
        # No usage reported: the budgets were charged the ceiling, and so is the score.
        charged = cost if cost is not None else ceiling
        self._count_charge(charged, ceiling=cost is None, **labels)
        spent, unpriced = charged or 0.0, charged is None
        at_ceiling = cost is None and not unpriced
        if completion.refusal is not None:
            self.stats.add("invalid_verdicts", 1, **labels)
            return _Outcome(
                error_code=ErrorCode.INVALID_VERDICT,
                error_message=f"invalid verdict: the judge refused to answer "
                f"({_clip(completion.refusal)})",
                cost_usd=spent,
                unpriced=unpriced,
                ceiling_cost=at_ceiling,
            )
        try:
            value = question.parse(completion.text)
        except VerdictError as err:
            self.stats.add("invalid_verdicts", 1, **labels)
            cut = " (the answer was cut off at max_tokens)" if completion.truncated else ""
            return _Outcome(
                error_code=ErrorCode.INVALID_VERDICT,
                error_message=f"invalid verdict: {err}{cut}",
                cost_usd=spent,
                unpriced=unpriced,
                ceiling_cost=at_ceiling,
            )
        if self.use_cache:  # stored by `_fly`, once the waiting checks have the verdict
            flight.store = CachedAnswer(
                completion.text, completion.input_tokens, completion.output_tokens, flight.tenant
            )
        return _Outcome(value, cost_usd=spent, unpriced=unpriced, ceiling_cost=at_ceiling)

    def _count_charge(self, charged: float | None, *, ceiling: bool, **labels: str) -> None:
        """Count what one call made was charged: dollars (None: an unpriced model), and
        whether that is its ceiling (the upstream's usage missing or impossible)."""
        if charged is None:
            self.stats.add("unpriced_calls", 1, **labels)
            return
        self.stats.add("cost_usd", charged, **labels)
        if ceiling:
            self.stats.add("ceiling_charges", 1, **labels)

    # --- money ---------------------------------------------------------------------------------

    def _cost(
        self, model: str, input_tokens: int | None, output_tokens: int | None
    ) -> float | None:
        if input_tokens is None or output_tokens is None:
            return None  # the server did not report usage: the cost is unknown, not zero
        return self.prices.cost(model, input_tokens, output_tokens)

    def _ceiling(
        self, model: str, question: Question[Any], bound: int | None = None
    ) -> float | None:
        """The most this call can cost, or None when the model has no price (`bound`: the
        prompt's token bound when the caller has it)."""
        price = self.prices.price(model)
        if price is None:
            return None
        return price.ceiling(
            _prompt_bound(question) if bound is None else bound, question.max_tokens
        )

    async def _hold(
        self, flight: _Flight, model: str, question: Question[Any], ceiling: float | None
    ) -> Held | _Outcome:
        """The flight's prepaid reservations, else fresh ones for its call."""
        if flight.held is not None:
            held, flight.held = flight.held, None
            return held
        return await self._reserve(flight.budget, model, question, ceiling)

    async def _reserve(
        self, run_budget: Budget | None, model: str, question: Question[Any], ceiling: float | None
    ) -> Held | _Outcome:
        held = await self._reserve_many(run_budget, model, question, [ceiling])
        return held if isinstance(held, _Outcome) else held[0]

    async def _reserve_many(
        self,
        run_budget: Budget | None,
        model: str,
        question: Question[Any],
        ceilings: Sequence[float | None],
    ) -> list[Held] | _Outcome:
        """One hold per ceiling from every budget, all or none (a refusal as an outcome)."""
        budgets = [
            (budget, server)
            for budget, server in ((run_budget, False), (self.server_budget, True))
            if budget is not None
        ]
        if not budgets:
            return [[] for _ in ceilings]
        if any(c is None for c in ceilings):
            refusal = self.prices.unpriced_refusal(model)
            if refusal is not None:
                self.stats.add("budget_refusals")
                return _Outcome(error_code=ErrorCode.UNPRICED_MODEL, error_message=refusal)
        amounts = [c or 0.0 for c in ceilings]  # an allowed unpriced call holds nothing
        held: list[tuple[Budget, list[Reservation]]] = []
        try:
            for budget, server in budgets:
                try:
                    reservations = await budget.reserve_all(amounts)
                except BudgetUnavailable as err:
                    for b, rs in held:
                        for r in rs:
                            b.release(r)
                    held.clear()
                    return _Outcome(error_code=ErrorCode.BUDGET_UNAVAILABLE, error_message=str(err))
                if reservations is None:
                    for b, rs in held:
                        for r in rs:
                            b.release(r)
                    self.stats.add("budget_refusals")
                    amount = math.fsum(amounts)
                    return _Outcome(
                        error_code=ErrorCode.BUDGET_EXHAUSTED,
                        error_message=_refusal(
                            budget, server, amount, model, question, len(amounts)
                        ),
                    )
                held.append((budget, reservations))
        except BaseException:
            for b, rs in held:
                for r in rs:
                    b.release(r)
            raise
        return [[(b, rs[i]) for b, rs in held] for i in range(len(amounts))]

    # --- the call ------------------------------------------------------------------------------

    async def _call(
        self, flight: _Flight, backend: JudgeBackend, model: str, question: Question[Any]
    ) -> Completion:
        labels = {"backend": backend.name, "model": model}
        attempt = 0
        while True:
            remaining = flight.remaining()
            if remaining is not None and remaining <= 0:
                raise _CallFailed(
                    "the request deadline passed before the judge answered",
                    ErrorCode.DEADLINE_EXCEEDED,
                )
            timeout = self._timeout_s if remaining is None else min(self._timeout_s, remaining)
            try:
                return _scrubbed(await self._attempt(backend, model, question, timeout, labels))
            except BackendError as err:
                failure = err
            if not failure.retryable or attempt >= self._retry.max_retries:
                tries = f" (after {attempt + 1} attempts)" if attempt else ""
                raise _CallFailed(failure.message + tries)
            delay = self._retry.delay(attempt, failure.retry_after)
            if delay > self._retry.max_s:
                raise _CallFailed(
                    f"{failure.message}; it asked to wait {failure.retry_after:g} s, longer "
                    f"than the {self._retry.max_s:g} s allowed"
                )
            remaining = flight.remaining()
            if remaining is not None and delay >= remaining:
                raise _CallFailed(
                    f"{failure.message}; no time is left to retry before the deadline"
                )
            self.stats.add("retries", 1, **labels)
            log.info(
                "judge %s:%s: %s; retry %d in %.2f s",
                backend.name,
                model,
                failure.message,
                attempt + 1,
                delay,
            )
            await self._sleep(delay)
            attempt += 1

    async def _attempt(
        self,
        backend: JudgeBackend,
        model: str,
        question: Question[Any],
        limit_s: float,
        labels: dict[str, str],
    ) -> Completion:
        async with self._limits[backend.name]:
            self.stats.add("in_flight", 1, **labels)
            self.stats.add("calls", 1, **labels)
            temperature = self._temperature_of(question)
            attributes = {
                tracing.OPERATION: "chat",
                tracing.PROVIDER: backend.name,
                tracing.REQUEST_MODEL: model,
                tracing.REQUEST_MAX_TOKENS: question.max_tokens,
                tracing.REQUEST_TEMPERATURE: temperature,
            }
            with tracing.span(f"chat {model}", attributes, client=True) as current:
                try:
                    # The SDK's timeout bounds each read; this bounds the whole attempt.
                    async with asyncio.timeout(limit_s):
                        completion = await backend.complete(
                            question.prompt,
                            model=model,
                            max_tokens=question.max_tokens,
                            temperature=temperature,
                            timeout_s=limit_s,
                        )
                except TimeoutError:
                    tracing.set_attributes(current, error_type="timeout")
                    raise BackendError(
                        f"the {backend.name} judge timed out", retryable=True
                    ) from None
                except BackendError:
                    tracing.set_attributes(current, error_type="backend_error")
                    raise
                finally:
                    self.stats.add("in_flight", -1, **labels)
                tracing.set_attributes(
                    current,
                    input_tokens=completion.input_tokens,
                    output_tokens=completion.output_tokens,
                )
                return completion

    # --- extractor -------------------------------------------------------------------------------

    async def extract(
        self,
        criteria: str,
        sample: Sample,
        output: Output,
        ctx: CheckContext,
        examples: Sequence[ExampleLike] = (),
    ) -> Extraction:
        """Have the default judge extract `criteria` from the output (cached like a verdict).

        An output with nothing matching is an extraction failure (an error score, not a
        pass or a fail): the check has nothing to run on.
        """
        question = Question(
            render_extract(criteria, output.text, examples), parse_extraction, max_tokens=1024
        )
        answer = await self.ask(ctx, question)
        if answer.error_code is not None:
            return Extraction(
                "",
                cost_usd=answer.cost_usd,
                cached=answer.cached,
                error_message=answer.error_message,
            )
        found = cast(ExtractVerdict, answer.value)
        if not found.found:
            return Extraction(
                "",
                cost_usd=answer.cost_usd,
                cached=answer.cached,
                error_message="the output contains nothing matching the extractor",
            )
        return Extraction(found.text, cost_usd=answer.cost_usd, cached=answer.cached)


_BUDGET_CODES = frozenset(
    {ErrorCode.BUDGET_EXHAUSTED, ErrorCode.UNPRICED_MODEL, ErrorCode.BUDGET_UNAVAILABLE}
)
"""Refusals that depend on the budget of the flight's leader (another run may pass)."""


def _unlimited(budget: Budget) -> bool:
    """Whether `budget` and every parent only count (no limit can refuse a call)."""
    b: Budget | None = budget
    while b is not None:
        if b.limit_usd is not None:
            return False
        b = b.parent
    return True


def _run_budget(ctx: CheckContext) -> Budget | None:
    budget = ctx.budget
    if budget is not None and not isinstance(budget, Budget):
        # Silently ignoring a limit would spend money the caller did not allow.
        raise TypeError("CheckContext.budget must be a scorewire.judge.Budget or None")
    return budget


def _charge(cost: float | None, ceiling: float | None, reservation: Reservation) -> float | None:
    """What a budget is charged: the cost, else the ceiling held (a priced call whose usage
    is unknown or impossible), else None (an allowed unpriced call, counted apart)."""
    if cost is not None:
        return cost
    return None if ceiling is None else reservation.amount


def _prompt_bound(question: Question[Any]) -> int:
    prompt = question.prompt
    return prompt_token_bound(prompt.system, prompt.user, prompt.schema)


def _budget_left(budget: Budget) -> float | None:
    left = budget.remaining_usd()
    parent = budget.parent
    while parent is not None:
        up = parent.remaining_usd()
        if up is not None:
            left = up if left is None else min(left, up)
        parent = parent.parent
    return left


def _refusal(
    budget: Budget, server: bool, amount: float, model: str, question: Question[Any], calls: int = 1
) -> str:
    whose = "the server's judge budget for this period" if server else "the judge budget"
    left = _budget_left(budget)
    if budget.exhausted or left is None or left <= 0:
        return f"{BUDGET_EXHAUSTED}: {whose} is spent" if server else BUDGET_EXHAUSTED
    what = "this call" if calls == 1 else f"these {calls} calls (one per judge sample)"
    each = "" if calls == 1 else " each"
    return (
        f"{BUDGET_EXHAUSTED}: {what} could cost up to ${amount:.6f} "
        f"({question.max_tokens} max_tokens and the whole prompt at {model}'s price{each}), "
        f"more than the ${left:.6f} left in {whose}"
    )


def _answer(outcome: _Outcome, *, cached: bool) -> Answer[Any]:
    return Answer(
        outcome.value,
        error_code=outcome.error_code,
        error_message=scrub(outcome.error_message),
        cost_usd=outcome.cost_usd,
        cached=cached and outcome.error_code is None,
        unpriced=outcome.unpriced,
        ceiling_cost=outcome.ceiling_cost,
    )


def _scrubbed(completion: Completion) -> Completion:
    # The answer's text becomes reasons (the verdict's reasoning) and cache entries.
    text, refusal = scrub(completion.text), completion.refusal
    refusal = None if refusal is None else scrub(refusal)
    if text == completion.text and refusal == completion.refusal:
        return completion
    return dataclasses.replace(completion, text=text, refusal=refusal)


def _evaluation_event(current: Any, question: Question[Any], value: Any) -> None:
    """The verdict as a `gen_ai.evaluation.result` event (no reasoning: it quotes outputs)."""
    attributes: dict[str, Any] = {tracing.EVALUATION_NAME: question.prompt.kind}
    score = getattr(value, "level", None)  # a LevelVerdict's grade
    if isinstance(score, int | float) and not isinstance(score, bool):
        attributes[tracing.EVALUATION_SCORE_VALUE] = float(score)
    winner = getattr(value, "winner", None)
    if isinstance(winner, str):
        attributes[tracing.EVALUATION_SCORE_LABEL] = winner
    current.add_event(tracing.EVALUATION_EVENT, attributes)


def _redis_cache(settings: Settings) -> bool:
    return settings.cache_url.strip().lower().startswith(("redis://", "rediss://"))


def _budget_url(settings: Settings) -> str:
    return settings.budget_url.get_secret_value() if settings.budget_url is not None else ""


def _shared_client(settings: Settings) -> Any:
    """One redis-py client for the verdict cache, the budgets and the leases when they are
    all on the cache's Redis (no `budget_url`), so that a cache read and a lease go in one
    script; else None. Each operation keeps its own timeout (`cache_timeout_s` or
    `budget_timeout_s`); the client's socket timeout is the longer of the two."""
    if not _redis_cache(settings) or _budget_url(settings):
        return None
    return redis_client(
        parse_redis_url(settings.cache_url, "the cache URL"),
        tls_ca=settings.redis_tls_ca,
        timeout_s=max(settings.cache_timeout_s, settings.budget_timeout_s),
        pool_size=settings.cache_pool_size,
    )


def _shared_state(
    settings: Settings, stats: JudgeStats, client: Any = None
) -> tuple[Ledger | None, VerdictLeases | None]:
    """The Redis of shared budgets and leases: `budget_url`, else a Redis `cache_url`
    (through `client`, the cache's, when given)."""
    url = _budget_url(settings)
    if not url:
        if not _redis_cache(settings):
            return None, None
        url = settings.cache_url
    target = parse_redis_url(url, "the budget URL" if settings.budget_url else "the cache URL")
    if client is None:
        client = redis_client(
            target,
            tls_ca=settings.redis_tls_ca,
            timeout_s=settings.budget_timeout_s,
            pool_size=settings.cache_pool_size,
        )
    ledger = Ledger(
        client,
        stats=stats,
        description=target.describe(),
        timeout_s=settings.budget_timeout_s,
        hold_ttl_s=settings.budget_reservation_ttl_s,
        poll_s=settings.budget_poll_s,
        fail_open=settings.budget_fail_open,
    )
    leases = None
    # Waiting for another replica's verdict needs a cache every replica reads.
    if _redis_cache(settings) and settings.single_flight_wait_s > 0:
        leases = VerdictLeases(
            client,
            ledger.release_lease,
            stats=stats,
            lease_s=settings.single_flight_lease_s,
            wait_s=settings.single_flight_wait_s,
            poll_s=settings.budget_poll_s,
            timeout_s=settings.budget_timeout_s,
            leftovers=ledger.leftovers,
        )
    return ledger, leases


def _clip(text: str, limit: int = 200) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
