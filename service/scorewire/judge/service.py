"""The judge service: what goes on `CheckContext.judge`.

One `ask` does, in order:
1. route the model (`backend:model`, the default, or `auto` by credentials present);
2. join an identical request already in flight (same cache key) instead of making one;
3. look the verdict up in the cache (cost 0, `cached`);
4. reserve money from the run's budget and the server-wide budget (or refuse with
   BUDGET_EXHAUSTED);
5. call the backend under its concurrency limit, retrying 429/5xx/timeouts with
   backoff and Retry-After, bounded by the request deadline;
6. price the tokens, settle the budgets, parse the verdict strictly and cache it only
   when it parsed.

Cancelling every check waiting on a request cancels the request itself.
"""

from __future__ import annotations

import asyncio
import logging
import os
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, TypeVar, cast

from scorewire.core.context import CheckContext, Extraction
from scorewire.core.model import ErrorCode, Output, Sample
from scorewire.judge.answers import BUDGET_EXHAUSTED, NO_JUDGE, Answer, Question
from scorewire.judge.backends.base import BackendError, Completion, JudgeBackend
from scorewire.judge.budget import Budget, PeriodBudget, Reservation
from scorewire.judge.cache import CachedAnswer, VerdictCache, verdict_key
from scorewire.judge.models import BACKENDS, DEFAULT_MODELS, ModelRef, parse_model
from scorewire.judge.pricing import PriceTable
from scorewire.judge.prompts import ExampleLike, render_extract
from scorewire.judge.retry import RetryPolicy
from scorewire.judge.stats import JudgeStats
from scorewire.judge.verdict import ExtractVerdict, VerdictError, parse_extraction
from scorewire.settings import Settings

log = logging.getLogger(__name__)

T = TypeVar("T")

_CHARS_PER_TOKEN_ESTIMATE = 3.0
"""Conservative (English averages ~4): a budget reservation should not be too small."""


class _Outcome:
    """The shared result of one flight: a parsed verdict or an error, and its cost."""

    __slots__ = ("cost_usd", "error_code", "error_message", "from_cache", "unpriced", "value")

    def __init__(
        self,
        value: Any = None,
        *,
        error_code: str | None = None,
        error_message: str = "",
        cost_usd: float = 0.0,
        unpriced: bool = False,
        from_cache: bool = False,
    ) -> None:
        self.value = value
        self.error_code = error_code
        self.error_message = error_message
        self.cost_usd = cost_usd
        self.unpriced = unpriced
        self.from_cache = from_cache


class _Flight:
    """One request in flight, shared by every check asking the same question."""

    __slots__ = ("budget", "deadline", "task", "waiters")

    def __init__(self, deadline: float | None, budget: Budget | None) -> None:
        self.task: asyncio.Task[_Outcome] | None = None
        self.waiters = 0
        self.deadline = deadline
        self.budget = budget

    def join(self, deadline: float | None) -> None:
        """Extend the deadline to the latest of the waiters' (None means unbounded)."""
        if self.deadline is not None:
            self.deadline = None if deadline is None else max(self.deadline, deadline)

    def remaining(self) -> float | None:
        return None if self.deadline is None else self.deadline - time.monotonic()


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
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
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
        self._limits = {name: asyncio.Semaphore(concurrency) for name in self._backends}
        self.server_budget = server_budget
        """The server-wide budget per period, or None."""
        self._sleep = sleep
        self._flights: dict[str, _Flight] = {}
        self._auto = next((b for b in BACKENDS if b in self._backends), None)

    @classmethod
    def from_settings(cls, settings: Settings) -> JudgeService:
        """Build backends, cache, prices and budgets from settings (credentials from env).

        Raises ValueError for an unusable `judge_model` or `cache_url`.
        """
        stats = JudgeStats()
        backends: dict[str, JudgeBackend] = {}
        openai_key = _secret(settings.openai_api_key, "OPENAI_API_KEY")
        openai_url = settings.openai_base_url or os.environ.get("OPENAI_BASE_URL") or None
        if openai_key or openai_url:
            from scorewire.judge.backends.openai_backend import OpenAIBackend

            # Local OpenAI-compatible servers (vLLM, Ollama) need no key, but the SDK
            # insists on one.
            backends["openai"] = OpenAIBackend(api_key=openai_key or "unused", base_url=openai_url)
        anthropic_key = _secret(settings.anthropic_api_key, "ANTHROPIC_API_KEY")
        if anthropic_key:
            from scorewire.judge.backends.anthropic_backend import AnthropicBackend

            backends["anthropic"] = AnthropicBackend(
                api_key=anthropic_key,
                base_url=settings.anthropic_base_url
                or os.environ.get("ANTHROPIC_BASE_URL")
                or None,
            )
        server_budget = (
            PeriodBudget(settings.judge_budget_usd, settings.judge_budget_period_s)
            if settings.judge_budget_usd is not None
            else None
        )
        cache = VerdictCache.from_url(
            settings.cache_url,
            stats=stats,
            ttl_s=settings.cache_ttl_s or None,
            timeout_s=settings.cache_timeout_s,
            backoff_s=settings.cache_backoff_s,
            pool_size=settings.cache_pool_size,
        )
        return cls(
            backends=backends,
            cache=cache,
            default_model=parse_model(settings.judge_model),
            prices=PriceTable(settings.judge_prices),
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
        )

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

    # --- routing ---------------------------------------------------------------------------

    def describe(self, ref: ModelRef | None = None) -> str:
        """`backend:model` that `ref` (default: the default model) routes to, or why none."""
        route = self._route(ref or ModelRef(None, None))
        return route if isinstance(route, str) else f"{route[0].name}:{route[1]}"

    def _route(self, ref: ModelRef) -> tuple[JudgeBackend, str] | str:
        default_backend = self._default.backend or self._auto
        name = ref.backend or default_backend
        if name is None:
            return (
                f"{NO_JUDGE}: set SCOREWIRE_OPENAI_API_KEY (or SCOREWIRE_OPENAI_BASE_URL) "
                "or SCOREWIRE_ANTHROPIC_API_KEY"
            )
        backend = self._backends.get(name)
        if backend is None:
            return (
                f"the {name} judge backend is not configured: set SCOREWIRE_{name.upper()}_API_KEY"
            )
        if ref.model:
            model = ref.model
        elif name == default_backend and self._default.model:
            model = self._default.model
        else:
            model = DEFAULT_MODELS[name]
        return backend, model

    # --- asking ------------------------------------------------------------------------------

    async def ask(self, ctx: CheckContext, question: Question[T]) -> Answer[T]:
        """Get a verdict for `question`, from the cache, a shared call, or a new call."""
        route = self._route(question.model)
        if isinstance(route, str):
            return Answer(None, error_code=ErrorCode.JUDGE_ERROR, error_message=route)
        backend, model = route
        key = verdict_key(
            question.prompt,
            backend=backend.name,
            model=model,
            temperature=self._temperature,
            max_tokens=question.max_tokens,
        )
        budget = ctx.budget
        if budget is not None and not isinstance(budget, Budget):
            # Silently ignoring a limit would spend money the caller did not allow.
            raise TypeError("CheckContext.budget must be a scorewire.judge.Budget or None")
        while True:
            flight = self._flights.get(key)
            leader = flight is None
            if flight is None:
                flight = self._start(key, backend, model, question, ctx.deadline, budget)
            else:
                flight.join(ctx.deadline)
            outcome = await self._wait(key, flight)
            if leader:
                return _answer(outcome, cached=outcome.from_cache)
            if outcome.error_code == ErrorCode.BUDGET_EXHAUSTED and flight.budget is not budget:
                # Another run's budget refused; ours may still allow the call.
                if self._flights.get(key) is flight:
                    del self._flights[key]
                continue
            self.stats.add("shared_calls")
            if outcome.error_code is None and not outcome.from_cache:
                self.stats.add("saved_usd", outcome.cost_usd)
            return Answer(
                outcome.value,
                error_code=outcome.error_code,
                error_message=outcome.error_message,
                cached=outcome.error_code is None,
            )

    def _start(
        self,
        key: str,
        backend: JudgeBackend,
        model: str,
        question: Question[Any],
        deadline: float | None,
        budget: Budget | None,
    ) -> _Flight:
        flight = _Flight(deadline, budget)
        task = asyncio.get_running_loop().create_task(
            self._resolve(flight, key, backend, model, question)
        )
        flight.task = task
        self._flights[key] = flight

        def forget(_: asyncio.Task[_Outcome]) -> None:
            if self._flights.get(key) is flight:
                del self._flights[key]

        task.add_done_callback(forget)
        return flight

    async def _wait(self, key: str, flight: _Flight) -> _Outcome:
        task = flight.task
        assert task is not None
        flight.waiters += 1
        try:
            return await asyncio.shield(task)
        except asyncio.CancelledError:
            if flight.waiters == 1 and not task.done():
                # The last check waiting went away (its deadline, or a cancelled stream):
                # stop the call rather than pay for a verdict nobody reads.
                task.cancel()
                if self._flights.get(key) is flight:
                    del self._flights[key]
            raise
        finally:
            flight.waiters -= 1

    async def _resolve(
        self,
        flight: _Flight,
        key: str,
        backend: JudgeBackend,
        model: str,
        question: Question[Any],
    ) -> _Outcome:
        hit = await self._cache.get(key)
        if hit is not None:
            try:
                value = question.parse(hit.text)
            except VerdictError:
                log.warning("verdict cache: unreadable entry ignored")
            else:
                saved = self._cost(model, hit.input_tokens, hit.output_tokens)
                if saved is not None:
                    self.stats.add("saved_usd", saved)
                return _Outcome(value, from_cache=True)
        reservations = await self._reserve(flight, model, question)
        if isinstance(reservations, _Outcome):
            return reservations
        completion: Completion | None = None
        cost: float | None = None
        try:
            completion = await self._call(flight, backend, model, question)
            cost = self._cost(model, completion.input_tokens, completion.output_tokens)
        except _CallFailed as failed:
            self.stats.add("call_failures", backend=backend.name, model=model)
            return _Outcome(
                error_code=failed.code, error_message=f"judge call failed: {failed.message}"
            )
        finally:
            # A call that produced no answer (failed or cancelled) bills nothing we can
            # see: its reservation is given back rather than settled.
            for budget, reservation in reservations:
                if completion is None:
                    budget.release(reservation)
                else:
                    budget.settle(reservation, cost)
        return await self._conclude(key, backend, model, question, completion, cost)

    async def _conclude(
        self,
        key: str,
        backend: JudgeBackend,
        model: str,
        question: Question[Any],
        completion: Completion,
        cost: float | None,
    ) -> _Outcome:
        labels = {"backend": backend.name, "model": model}
        self.stats.add("input_tokens", completion.input_tokens or 0, **labels)
        self.stats.add("output_tokens", completion.output_tokens or 0, **labels)
        if cost is None:
            self.stats.add("unpriced_calls", 1, **labels)
        else:
            self.stats.add("cost_usd", cost, **labels)
        spent = cost or 0.0
        unpriced = cost is None
        if completion.refusal is not None:
            self.stats.add("invalid_verdicts", 1, **labels)
            return _Outcome(
                error_code=ErrorCode.INVALID_VERDICT,
                error_message=f"invalid verdict: the judge refused to answer "
                f"({_clip(completion.refusal)})",
                cost_usd=spent,
                unpriced=unpriced,
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
            )
        await self._cache.set(
            key, CachedAnswer(completion.text, completion.input_tokens, completion.output_tokens)
        )
        return _Outcome(value, cost_usd=spent, unpriced=unpriced)

    # --- money ---------------------------------------------------------------------------------

    def _cost(
        self, model: str, input_tokens: int | None, output_tokens: int | None
    ) -> float | None:
        if input_tokens is None or output_tokens is None:
            return None  # the server did not report usage: the cost is unknown, not zero
        return self.prices.cost(model, input_tokens, output_tokens)

    def _estimate(self, model: str, question: Question[Any]) -> float:
        price = self.prices.price(model)
        if price is None:
            return 0.0
        chars = len(question.prompt.system) + len(question.prompt.user)
        return price.cost(int(chars / _CHARS_PER_TOKEN_ESTIMATE) + 1, question.max_tokens)

    async def _reserve(
        self, flight: _Flight, model: str, question: Question[Any]
    ) -> list[tuple[Budget, Reservation]] | _Outcome:
        estimate = self._estimate(model, question)
        held: list[tuple[Budget, Reservation]] = []
        try:
            for budget, refusal in (
                (flight.budget, BUDGET_EXHAUSTED),
                (
                    self.server_budget,
                    f"{BUDGET_EXHAUSTED}: the server's judge budget for this period is spent",
                ),
            ):
                if budget is None:
                    continue
                reservation = await budget.reserve(estimate)
                if reservation is None:
                    for b, r in held:
                        b.release(r)
                    held.clear()
                    self.stats.add("budget_refusals")
                    return _Outcome(error_code=ErrorCode.BUDGET_EXHAUSTED, error_message=refusal)
                held.append((budget, reservation))
        except BaseException:
            for b, r in held:
                b.release(r)
            raise
        return held

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
                return await self._attempt(backend, model, question, timeout, labels)
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
            try:
                # The SDK's timeout bounds each read; this bounds the whole attempt.
                async with asyncio.timeout(limit_s):
                    return await backend.complete(
                        question.prompt,
                        model=model,
                        max_tokens=question.max_tokens,
                        temperature=self._temperature,
                        timeout_s=limit_s,
                    )
            except TimeoutError:
                raise BackendError(f"the {backend.name} judge timed out", retryable=True) from None
            finally:
                self.stats.add("in_flight", -1, **labels)

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


def _answer(outcome: _Outcome, *, cached: bool) -> Answer[Any]:
    return Answer(
        outcome.value,
        error_code=outcome.error_code,
        error_message=outcome.error_message,
        cost_usd=outcome.cost_usd,
        cached=cached and outcome.error_code is None,
        unpriced=outcome.unpriced,
    )


def _secret(value: Any, env_name: str) -> str | None:
    if value is not None:
        secret = value.get_secret_value()
        if secret:
            return cast(str, secret)
    return os.environ.get(env_name) or None


def _clip(text: str, limit: int = 200) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
