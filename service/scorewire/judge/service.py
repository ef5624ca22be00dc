"""The judge service: what goes on `CheckContext.judge`.

One `ask` does, in order:
1. route the model (`backend:model`, the default, or `auto` by credentials present);
2. join an identical request already in flight (same cache key) instead of making one;
3. look the verdict up in the cache (cost 0, `cached`), unless another tenant paid for
   it (see below), or it is older than the request and the request asked the judges
   again (`CheckContext.fresh_since`: the call is then made, reserved and charged as a
   miss's, and its verdict replaces the cached one; see "Asking again" below);
4. reserve the call's ceiling (the whole prompt and all of `max_tokens` at the model's
   price) from the run's budget and the server-wide budget, or refuse with
   BUDGET_EXHAUSTED; a budgeted call to a model without a price is refused with
   UNPRICED_MODEL unless the settings give a fallback price or allow unpriced calls;
5. call the backend under its concurrency limit, shared by tenant (a tenant with many
   calls waiting waits behind itself, weighted by `tenant_weights`), retrying 429/5xx/timeouts with
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

Asking again: a request with `fresh_since` reads only verdicts the judges gave since that
time, so a holdout rerun shows a judge's drift with the cache on, and a question asked
twice in one such request is still asked once. Its calls are held against the same
budgets as any miss (all of a check's reserved before the first, `prepay`), and a flight
it joins that answers from an older entry is left for one of its own. Its verdicts are
stored, except over an entry another tenant paid for when tenants do not trust each
other (`VerdictSharing.store`).

Cancelling every check waiting on a request cancels the request itself.

`JudgeService` routes and composes the parts, each in a module of its own: single flight
within the process (`flights`), the cache and the leases across replicas (`sharing`),
ceilings, budgets and charges (`billing`), and the call with its attempts (`calls`).
"""

from __future__ import annotations

import asyncio
import functools
import itertools
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, TypeVar, cast

from scorewire.core import tracing
from scorewire.core.context import CheckContext, Extraction
from scorewire.core.judged import note_judge
from scorewire.core.model import ErrorCode, Output, Sample
from scorewire.core.secrets import scrub
from scorewire.judge import wiring
from scorewire.judge.answers import Answer, Question
from scorewire.judge.backends.base import JudgeBackend
from scorewire.judge.billing import Billing, run_budget, unlimited
from scorewire.judge.budget import Budget
from scorewire.judge.cache import VerdictCache
from scorewire.judge.cache_entry import verdict_key
from scorewire.judge.calls import JudgeCalls
from scorewire.judge.flights import Flight, Flights, Held, Outcome
from scorewire.judge.models import DEFAULT_MODELS, ModelRef, parse_model
from scorewire.judge.pricing import PriceTable
from scorewire.judge.prompts import ExampleLike, render_extract
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
from scorewire.judge.shared import Ledger, VerdictLeases
from scorewire.judge.sharing import VerdictSharing
from scorewire.judge.stats import JudgeStats
from scorewire.judge.verdict import ExtractVerdict, parse_extraction
from scorewire.settings import Settings

T = TypeVar("T")


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
        tenant_weights: Mapping[str, float] | None = None,
        server_budget: Budget | None = None,
        tenants_trust_each_other: bool = False,
        ledger: Ledger | None = None,
        leases: VerdictLeases | None = None,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        hints: Mapping[str, Hint] | None = None,
    ) -> None:
        self._backends = dict(backends)
        self._default = default_model or ModelRef(None, None)
        self.prices = prices or PriceTable()
        """The price table in use."""
        self.stats = stats or JudgeStats()
        """Counters of calls, tokens, dollars, cache traffic and retries."""
        self._hints = dict(hints or HINTS)
        self.ledger = ledger
        """Where shared budgets live (Redis), or None: budgets are per process."""
        self._billing = Billing(self.prices, server_budget, self.stats)
        self._sharing = VerdictSharing(
            cache,
            leases,
            self._billing,
            self.stats,
            tenants_trust_each_other=tenants_trust_each_other,
        )
        self._calls = JudgeCalls(
            self._backends.values(),
            self._billing,
            self.stats,
            temperature=temperature,
            timeout_s=timeout_s,
            retry=retry or RetryPolicy(),
            concurrency=concurrency,
            tenant_weights=tenant_weights or {},
            sleep=sleep,
        )
        self._flights = Flights(store=self._sharing.store, give_back=self._sharing.give_back_lease)
        self._unshared = itertools.count()
        """Numbers that keep flight keys apart while `share_calls` is off."""

    @classmethod
    def from_settings(cls, settings: Settings, *, gemini: bool = False) -> JudgeService:
        """Build backends, cache, prices and budgets from settings (credentials from env).

        `gemini`: the OpenAI-compatible backend is Gemini's endpoint, built from the
        Gemini settings only (`scorewire.judge.routing`). Raises ValueError for an
        unusable `judge_model` or `cache_url`.
        """
        stats = JudgeStats()
        slots, hints = endpoints_from_settings(settings, gemini=gemini)
        backends = wiring.backends_from_slots(slots, settings)
        shared = wiring.shared_client(settings)
        cache = wiring.verdict_cache(settings, stats, shared)
        ledger, leases = wiring.shared_state(settings, stats, shared)
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
            tenant_weights=settings.tenant_weights,
            server_budget=wiring.server_budget(settings, ledger),
            tenants_trust_each_other=settings.tenants_trust_each_other,
            ledger=ledger,
            leases=leases,
            hints=hints,
        )

    @property
    def server_budget(self) -> Budget | None:
        """The server-wide budget per period, or None."""
        return self._billing.server_budget

    @property
    def tenants_trust_each_other(self) -> bool:
        """Whether a cache hit on another tenant's verdict may be reported as `cached`."""
        return self._sharing.tenants_trust_each_other

    @property
    def use_cache(self) -> bool:
        """Whether verdicts are read from and written to the cache (`scorewire run
        --no-cache` turns it off, with `share_calls`: every check makes its own call)."""
        return self._sharing.use_cache

    @use_cache.setter
    def use_cache(self, value: bool) -> None:
        self._sharing.use_cache = value

    @property
    def share_calls(self) -> bool:
        """Whether identical questions in flight share one call."""
        return self._sharing.share_calls

    @share_calls.setter
    def share_calls(self, value: bool) -> None:
        self._sharing.share_calls = value

    @property
    def flying(self) -> int:
        """Judge calls in progress, their verdicts' stores in the cache included."""
        return len(self._flights)

    @property
    def cache(self) -> VerdictCache:
        """The verdict cache."""
        return self._sharing.cache

    async def aclose(self) -> None:
        """Cancel requests in flight and close the HTTP clients and the cache."""
        await self._flights.close()
        for backend in self._backends.values():
            await backend.aclose()
        await self.cache.aclose()
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
            temperature=self._calls.temperature_of(question),
            max_tokens=question.max_tokens,
            sample=question.sample,
        )

    async def prepay(
        self, ctx: CheckContext, questions: Sequence[Question[Any]]
    ) -> list[Held | None] | Answer[Any]:
        """Reserve, all or none, the ceiling of every question whose verdict is not cached.

        A check that asks several questions for one score (repeated samples, both orders,
        a panel of judges, each question routed to its own model)
        calls this first, so that a budget that cannot pay for all of them refuses before
        the first call instead of after paying for some. Returns one hold per question
        (None where the cache already holds this tenant's verdict) to pass to `ask`, or
        the refusal as a failed Answer. Holds `ask` did not use are given back by
        `release`.
        """
        budget = run_budget(ctx)
        budgets = [b for b in (budget, self.server_budget) if b is not None]
        holds: list[Held | None] = [None] * len(questions)
        if all(unlimited(b) for b in budgets):
            # nothing can refuse: each call reserves its own, with no cache peek first
            return holds
        # Each question routes on its own (a panel asks several models); one that cannot
        # route holds nothing and fails in `ask` without spending.
        calls: list[tuple[int, str, Question[Any]]] = []
        for i, question in enumerate(questions):
            route = self._route(question.model)
            if isinstance(route, str):
                continue
            backend, model = route
            hit = await self.cache.peek(self._key(backend, model, question), since=ctx.fresh_since)
            if hit is None or not (self.tenants_trust_each_other or hit.tenant == ctx.tenant):
                calls.append((i, model, question))
        if not calls:
            return holds
        held = await self._billing.reserve_many(
            budget, [(m, q, self._billing.ceiling(m, q)) for _, m, q in calls]
        )
        if isinstance(held, Outcome):
            return _answer(held, cached=False)
        for (i, _, _), h in zip(calls, held, strict=True):
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
            answer = await self._ask(ctx, question, backend, model, held)
            note_answer(answer, backend.name, model)
            return answer
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
            note_answer(answer, backend.name, model)
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
        budget = run_budget(ctx)
        tenant = ctx.tenant
        # Sharing a call in flight would tell a tenant another one asked the same.
        flight_key = key if self.tenants_trust_each_other else f"{key}\0{tenant or ''}"
        if not self.share_calls:
            flight_key = f"{flight_key}\0{next(self._unshared)}"
        while True:
            flight = self._flights.get(flight_key)
            leader = flight is None
            if flight is None:
                flight = Flight(key, ctx.deadline, budget, tenant, held, ctx.fresh_since)
                resolve = functools.partial(self._resolve, flight, backend, model, question)
                self._flights.start(flight_key, flight, resolve)
                held = None  # the flight owns it now (a retry below reserves afresh)
            else:
                flight.join(ctx.deadline)
            outcome = await self._flights.wait(flight_key, flight)
            if leader:
                answer = _answer(outcome, cached=outcome.from_cache)
                answer.reported_model = outcome.model
                return answer
            if outcome.error_code in _BUDGET_CODES and flight.budget is not budget:
                # Another run's budget refused; ours may still allow the call.
                self._flights.land(flight_key, flight)
                continue
            if _older(outcome, ctx.fresh_since):
                # The flight's verdict is older than this check's request, which asked the
                # judges again (read from the cache, or answered before the check joined
                # a flight still storing it): ask them in a flight of its own.
                self._flights.land(flight_key, flight)
                continue
            self.stats.add("shared_calls")
            if outcome.error_code is None and not outcome.from_cache:
                self.stats.add("saved_usd", outcome.cost_usd)
            shared: Answer[T] = Answer(
                outcome.value,
                error_code=outcome.error_code,
                error_message=scrub(outcome.error_message),
                cached=outcome.error_code is None,
            )
            shared.reported_model = outcome.model
            return shared

    async def _resolve(
        self, flight: Flight, backend: JudgeBackend, model: str, question: Question[Any]
    ) -> Outcome:
        """The flight's verdict: from the cache or another replica's call, else its own."""
        found = await self._sharing.find(flight, model, question)
        if found is not None:
            return found
        # The lease, if taken, is given back as the flight ends: with the verdict's store.
        return await self._calls.make(flight, backend, model, question)

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


def _older(outcome: Outcome, since: float | None) -> bool:
    """Whether `outcome` is a verdict the judge gave before `since` (None: none is)."""
    return since is not None and outcome.answered_at is not None and outcome.answered_at < since


def _answer(outcome: Outcome, *, cached: bool) -> Answer[Any]:
    return Answer(
        outcome.value,
        error_code=outcome.error_code,
        error_message=scrub(outcome.error_message),
        cost_usd=outcome.cost_usd,
        cached=cached and outcome.error_code is None,
        unpriced=outcome.unpriced,
        ceiling_cost=outcome.ceiling_cost,
    )


def note_answer(answer: Answer[Any], backend: str, model: str) -> None:
    """Note a verdict's judge on the running check's trail (`scorewire.core.judged`);
    an answer without a verdict is not noted: no judge judged."""
    if answer.error_code is None:
        note_judge(f"{backend}:{model}", answer.reported_model)


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
