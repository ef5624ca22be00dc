"""What a judge call may cost and who pays for it.

Before a call, its ceiling (the whole prompt and all of `max_tokens` at the model's
price) is reserved from the run's budget and the server-wide budget, all or none, or the
call is refused: BUDGET_EXHAUSTED, UNPRICED_MODEL for a budgeted call to a model without
a price (unless the settings give a fallback price or allow unpriced calls), or
BUDGET_UNAVAILABLE when a shared budget's Redis does not answer. After it, the budgets
are settled with what the answer cost, or its ceiling when that is unknown (never a
refund), and the charge is counted.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from scorewire.core.context import CheckContext
from scorewire.core.model import ErrorCode
from scorewire.judge.answers import BUDGET_EXHAUSTED, Question
from scorewire.judge.budget import Budget, BudgetUnavailable, Reservation
from scorewire.judge.cache_entry import CachedAnswer
from scorewire.judge.flights import Flight, Held, Outcome
from scorewire.judge.pricing import PriceTable, prompt_token_bound
from scorewire.judge.stats import JudgeStats


class Billing:
    """Prices, ceilings, reservations and charges of the judge calls of one service."""

    def __init__(self, prices: PriceTable, server_budget: Budget | None, stats: JudgeStats) -> None:
        self.prices = prices
        self.server_budget = server_budget
        """The server-wide budget per period, or None."""
        self.stats = stats

    def cost(self, model: str, input_tokens: int | None, output_tokens: int | None) -> float | None:
        """What `model` charges for these tokens; None when usage or price is unknown."""
        if input_tokens is None or output_tokens is None:
            return None  # the server did not report usage: the cost is unknown, not zero
        return self.prices.cost(model, input_tokens, output_tokens)

    def ceiling(
        self, model: str, question: Question[Any], bound: int | None = None
    ) -> float | None:
        """The most this call can cost, or None when the model has no price (`bound`: the
        prompt's token bound when the caller has it)."""
        price = self.prices.price(model)
        if price is None:
            return None
        return price.ceiling(
            prompt_bound(question) if bound is None else bound, question.max_tokens
        )

    async def hold(
        self, flight: Flight, model: str, question: Question[Any], ceiling: float | None
    ) -> Held | Outcome:
        """The flight's prepaid reservations, else fresh ones for its call."""
        if flight.held is not None:
            held, flight.held = flight.held, None
            return held
        return await self._reserve(flight.budget, model, question, ceiling)

    async def _reserve(
        self, run_budget: Budget | None, model: str, question: Question[Any], ceiling: float | None
    ) -> Held | Outcome:
        held = await self.reserve_many(run_budget, [(model, question, ceiling)])
        return held if isinstance(held, Outcome) else held[0]

    async def reserve_many(
        self,
        run_budget: Budget | None,
        calls: Sequence[tuple[str, Question[Any], float | None]],
    ) -> list[Held] | Outcome:
        """One hold per call (model, question, ceiling) from every budget, all or none (a
        refusal as an outcome). The calls may name different models (a judge panel): an
        unpriced one refuses them all."""
        budgets = [
            (budget, server)
            for budget, server in ((run_budget, False), (self.server_budget, True))
            if budget is not None
        ]
        if not budgets:
            return [[] for _ in calls]
        for model, _, ceiling in calls:
            refusal = self.prices.unpriced_refusal(model) if ceiling is None else None
            if refusal is not None:
                self.stats.add("budget_refusals")
                return Outcome(error_code=ErrorCode.UNPRICED_MODEL, error_message=refusal)
        amounts = [c or 0.0 for _, _, c in calls]  # an allowed unpriced call holds nothing
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
                    return Outcome(error_code=ErrorCode.BUDGET_UNAVAILABLE, error_message=str(err))
                if reservations is None:
                    for b, rs in held:
                        for r in rs:
                            b.release(r)
                    self.stats.add("budget_refusals")
                    return Outcome(
                        error_code=ErrorCode.BUDGET_EXHAUSTED,
                        error_message=_refusal(budget, server, math.fsum(amounts), calls),
                    )
                held.append((budget, reservations))
        except BaseException:
            for b, rs in held:
                for r in rs:
                    b.release(r)
            raise
        return [[(b, rs[i]) for b, rs in held] for i in range(len(amounts))]

    @staticmethod
    def settle(
        reservations: Held, *, answered: bool, cost: float | None, ceiling: float | None
    ) -> None:
        """Settle a call's reservations with its cost (`answered`), else give them back."""
        # A call that produced no answer (failed or cancelled) bills nothing we can
        # see: its reservation is given back rather than settled. One whose cost is
        # unknown (no usage reported, or usage that cannot be true) is charged its
        # ceiling: a budget must not be bypassed by what the upstream says.
        for budget, reservation in reservations:
            if not answered:
                budget.release(reservation)
            else:
                budget.settle(reservation, _charge(cost, ceiling, reservation))

    async def foreign_hit(
        self,
        flight: Flight,
        model: str,
        question: Question[Any],
        value: Any,
        hit: CachedAnswer,
    ) -> Outcome:
        """Answer a hit on another tenant's verdict exactly as a fresh call would be answered.

        The caller's budgets are held and charged what the call would have cost (so
        neither its score nor its budget gives the hit away); the server's budget is held
        like a call's but charged nothing, since no money left. The saving is counted.
        """
        ceiling = self.ceiling(model, question)
        reservations = await self.hold(flight, model, question, ceiling)
        if isinstance(reservations, Outcome):
            return reservations
        would_cost = self.cost(model, hit.input_tokens, hit.output_tokens)
        for budget, reservation in reservations:
            if budget is self.server_budget:
                budget.release(reservation)
            else:
                budget.settle(reservation, _charge(would_cost, ceiling, reservation))
        if would_cost is not None:
            self.stats.add("saved_usd", would_cost)
        charged = would_cost if would_cost is not None else ceiling
        return Outcome(
            value,
            cost_usd=charged or 0.0,
            unpriced=charged is None,
            ceiling_cost=would_cost is None and ceiling is not None,
            model=hit.model,
            answered_at=hit.at or 0.0,
        )

    def count_charge(self, charged: float | None, *, ceiling: bool, **labels: str) -> None:
        """Count what one call made was charged: dollars (None: an unpriced model), and
        whether that is its ceiling (the upstream's usage missing or impossible)."""
        if charged is None:
            self.stats.add("unpriced_calls", 1, **labels)
            return
        self.stats.add("cost_usd", charged, **labels)
        if ceiling:
            self.stats.add("ceiling_charges", 1, **labels)


def unlimited(budget: Budget) -> bool:
    """Whether `budget` and every parent only count (no limit can refuse a call)."""
    b: Budget | None = budget
    while b is not None:
        if b.limit_usd is not None:
            return False
        b = b.parent
    return True


def run_budget(ctx: CheckContext) -> Budget | None:
    """The run's budget on `ctx` (TypeError for anything that is not a `Budget`)."""
    budget = ctx.budget
    if budget is not None and not isinstance(budget, Budget):
        # Silently ignoring a limit would spend money the caller did not allow.
        raise TypeError("CheckContext.budget must be a scorewire.judge.Budget or None")
    return budget


def prompt_bound(question: Question[Any]) -> int:
    """The most tokens `question`'s prompt can take (`pricing.prompt_token_bound`)."""
    prompt = question.prompt
    return prompt_token_bound(prompt.system, prompt.user, prompt.schema)


def _charge(cost: float | None, ceiling: float | None, reservation: Reservation) -> float | None:
    """What a budget is charged: the cost, else the ceiling held (a priced call whose usage
    is unknown or impossible), else None (an allowed unpriced call, counted apart)."""
    if cost is not None:
        return cost
    return None if ceiling is None else reservation.amount


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
    budget: Budget,
    server: bool,
    amount: float,
    calls: Sequence[tuple[str, Question[Any], float | None]],
) -> str:
    whose = "the server's judge budget for this period" if server else "the judge budget"
    left = _budget_left(budget)
    if budget.exhausted or left is None or left <= 0:
        return f"{BUDGET_EXHAUSTED}: {whose} is spent" if server else BUDGET_EXHAUSTED
    models = sorted({model for model, _, _ in calls})
    question = calls[0][1]
    if len(calls) == 1:
        what, each = "this call", ""
    elif len(models) == 1:
        what, each = f"these {len(calls)} calls (one per judge sample)", " each"
    else:
        what, each = f"these {len(calls)} calls (one per judge and sample)", " each"
    price = f"{models[0]}'s price" if len(models) == 1 else f"the prices of {', '.join(models)}"
    return (
        f"{BUDGET_EXHAUSTED}: {what} could cost up to ${amount:.6f} "
        f"({question.max_tokens} max_tokens and the whole prompt at {price}{each}), "
        f"more than the ${left:.6f} left in {whose}"
    )
