"""One judge call made: reserved, asked of its backend, settled, and its verdict read.

The call's ceiling is held from the budgets first (`Billing`); then the backend is asked
under its concurrency limit, each attempt bounded by `judge_timeout_s` and the request
deadline, 429/5xx/timeouts retried with backoff and Retry-After. The limit is shared by
the callers in turn (`core.fairness.FairSlots`): a tenant with many calls waiting waits
behind itself, not in front of another tenant. The reported usage is checked (negative
or beyond the ceiling's bounds is a JUDGE_ERROR charged at the ceiling, never a refund),
the tokens priced, the budgets settled, and the verdict parsed strictly; only a verdict
that parsed is left for the cache. Everything the upstream sends back is scrubbed of
credentials before it reaches a reason or the cache.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import time
from collections.abc import Awaitable, Callable, Iterable, Mapping
from typing import Any

from opentelemetry import trace
from scorewire.core import fairness, tracing
from scorewire.core.fairness import FairSlots, current_caller
from scorewire.core.model import ErrorCode
from scorewire.core.secrets import scrub
from scorewire.judge.answers import Question
from scorewire.judge.backends.base import BackendError, Completion, JudgeBackend
from scorewire.judge.billing import Billing, prompt_bound
from scorewire.judge.cache_entry import CachedAnswer
from scorewire.judge.flights import Flight, Outcome
from scorewire.judge.pricing import usage_problem
from scorewire.judge.retry import RetryPolicy
from scorewire.judge.stats import JudgeStats
from scorewire.judge.verdict import VerdictError

# The judge service's log lines keep the name they had before it was split.
log = logging.getLogger("scorewire.judge.service")


class _CallFailed(Exception):
    def __init__(self, message: str, code: str = ErrorCode.JUDGE_ERROR) -> None:
        super().__init__(message)
        self.message = message
        self.code = code


class JudgeCalls:
    """Calls to the judge backends: each one paid for, retried, limited and read."""

    def __init__(
        self,
        backends: Iterable[JudgeBackend],
        billing: Billing,
        stats: JudgeStats,
        *,
        temperature: float,
        timeout_s: float,
        retry: RetryPolicy,
        concurrency: int,
        tenant_weights: Mapping[str, float],
        sleep: Callable[[float], Awaitable[None]],
    ) -> None:
        """`concurrency` attempts in flight at once per backend, shared by the callers
        (`core.fairness.current_caller`) in turn, weighted by `tenant_weights` (by tenant
        name; a tenant not named weighs 1)."""
        self._billing = billing
        self.stats = stats
        self._temperature = temperature
        self._timeout_s = timeout_s
        self._retry = retry
        # Keyed by the backend's own name (`gemini` when the OpenAI slot points there).
        weights = fairness.tenant_weights(tenant_weights)
        self._limits = {b.name: FairSlots(concurrency, weights=weights) for b in backends}
        self._sleep = sleep

    def temperature_of(self, question: Question[Any]) -> float:
        """The sampling temperature `question` is asked at."""
        return self._temperature if question.temperature is None else question.temperature

    async def make(
        self, flight: Flight, backend: JudgeBackend, model: str, question: Question[Any]
    ) -> Outcome:
        """Reserve, call the backend, settle, and conclude (parse, and leave the verdict
        on the flight for the cache) one call."""
        billing = self._billing
        bound = prompt_bound(question)  # the ceiling's and the usage check's (one encode)
        ceiling = billing.ceiling(model, question, bound)
        reservations = await billing.hold(flight, model, question, ceiling)
        if isinstance(reservations, Outcome):
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
                cost = billing.cost(model, completion.input_tokens, completion.output_tokens)
            if tracing.ENABLED:  # the flight's task runs in the leader's `judge` span
                tracing.set_attributes(
                    trace.get_current_span(),
                    input_tokens=completion.input_tokens,
                    output_tokens=completion.output_tokens,
                )
        except _CallFailed as failed:
            self.stats.add("call_failures", backend=backend.name, model=model)
            return Outcome(
                error_code=failed.code, error_message=f"judge call failed: {failed.message}"
            )
        finally:
            billing.settle(
                reservations, answered=completion is not None, cost=cost, ceiling=ceiling
            )
        if problem is not None:
            labels = {"backend": backend.name, "model": model}
            self.stats.add("call_failures", **labels)
            billing.count_charge(ceiling, ceiling=True, **labels)
            log.warning("judge %s:%s: %s", backend.name, model, problem)
            return Outcome(
                error_code=ErrorCode.JUDGE_ERROR,
                error_message=f"judge call failed: {problem}; the call is charged its "
                "ceiling, never refunded",
                cost_usd=ceiling or 0.0,
                unpriced=ceiling is None,
            )
        return await self._conclude(backend, model, question, completion, cost, ceiling, flight)

    async def _conclude(
        self,
        backend: JudgeBackend,
        model: str,
        question: Question[Any],
        completion: Completion,
        cost: float | None,
        ceiling: float | None,
        flight: Flight,
    ) -> Outcome:
        labels = {"backend": backend.name, "model": model}
        self.stats.add("answered_calls", 1, **labels)
        self.stats.add("input_tokens", completion.input_tokens or 0, **labels)
        self.stats.add("output_tokens", completion.output_tokens or 0, **labels)
        # No usage reported: the budgets were charged the ceiling, and so is the score.
        charged = cost if cost is not None else ceiling
        self._billing.count_charge(charged, ceiling=cost is None, **labels)
        spent, unpriced = charged or 0.0, charged is None
        at_ceiling = cost is None and not unpriced
        if completion.refusal is not None:
            self.stats.add("invalid_verdicts", 1, **labels)
            return Outcome(
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
            return Outcome(
                error_code=ErrorCode.INVALID_VERDICT,
                error_message=f"invalid verdict: {err}{cut}",
                cost_usd=spent,
                unpriced=unpriced,
                ceiling_cost=at_ceiling,
            )
        # Stored once the waiting checks have the verdict (`VerdictSharing.store`).
        answered = time.time()
        flight.store = CachedAnswer(
            completion.text,
            completion.input_tokens,
            completion.output_tokens,
            flight.tenant,
            completion.model,
            answered,
        )
        return Outcome(
            value,
            cost_usd=spent,
            unpriced=unpriced,
            ceiling_cost=at_ceiling,
            model=completion.model,
            answered_at=answered,
        )

    async def _call(
        self, flight: Flight, backend: JudgeBackend, model: str, question: Question[Any]
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
        async with self._limits[backend.name].slot(current_caller.get()):
            self.stats.add("in_flight", 1, **labels)
            self.stats.add("calls", 1, **labels)
            temperature = self.temperature_of(question)
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


def _scrubbed(completion: Completion) -> Completion:
    # The answer's text becomes reasons (the verdict's reasoning) and cache entries.
    text, refusal = scrub(completion.text), completion.refusal
    refusal = None if refusal is None else scrub(refusal)
    if text == completion.text and refusal == completion.refusal:
        return completion
    return dataclasses.replace(completion, text=text, refusal=refusal)


def _clip(text: str, limit: int = 200) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
