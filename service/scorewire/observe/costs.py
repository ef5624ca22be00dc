"""Cost caps of online evaluation: per rule and per tenant, per hour and per day.

Each cap is a judge budget of its period (`judge.budget`): shared by every replica
through the judge's ledger (Redis) when it has one (`judge.shared.SharedBudget`), else
held by this process. A rule's observation of one tenant is scored with a budget that
holds every judge call in each of its caps, all or none (`AllOf`): the rule's hour and
day, the tenant's hour and day. A call that does not fit is refused before it is made
(BUDGET_EXHAUSTED), and the consumer skips that observation with reason `cost_cap`.

A cap needs prices: a rule with a judge check under a cap whose model has no price is
refused at load, naming the check (`check_rule_prices`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from scorewire.core.errors import FieldViolation, SpecError
from scorewire.judge.budget import Budget, PeriodBudget, Reservation
from scorewire.judge.shared import Ledger, SharedBudget
from scorewire.observe.rules import Rule
from scorewire.settings import Settings
from scorewire.suites.preflight import check_judges, judge_needs

HOUR_S = 3_600.0
DAY_S = 86_400.0


class AllOf(Budget):
    """A budget holding each reservation in every one of `budgets`, all or none.

    A parent chains one budget above another; caps that many rules and tenants share
    cannot be chained, each under the other's, so this holds in all of them side by side.
    """

    def __init__(self, budgets: Sequence[Budget]) -> None:
        super().__init__(None)
        self.budgets = list(budgets)

    @property
    def exhausted(self) -> bool:
        """True once any of the caps is spent (as last seen)."""
        return any(b.exhausted for b in self.budgets)

    def remaining_usd(self) -> float | None:
        """The least any cap has left; None when none has a limit."""
        left = [r for b in self.budgets if (r := b.remaining_usd()) is not None]
        return min(left) if left else None

    async def _hold_all(self, amounts_usd: Sequence[float]) -> list[Reservation] | None:
        held: list[tuple[Budget, list[Reservation]]] = []
        try:
            for budget in self.budgets:
                got = await budget.reserve_all(amounts_usd)
                if got is None:
                    _give_back(held)
                    return None
                held.append((budget, got))
        except BaseException:
            _give_back(held)
            raise
        self._add(math.fsum(amounts_usd), len(amounts_usd))
        return [
            Reservation(a, group=[(b, got[i]) for b, got in held])
            for i, a in enumerate(amounts_usd)
        ]

    def _settle_own(self, reservation: Reservation, cost_usd: float | None) -> None:
        for budget, part in reservation.group or ():
            budget.settle(part, cost_usd)
        super()._settle_own(reservation, cost_usd)

    def release(self, reservation: Reservation) -> None:
        """Give the reservation back in every cap (the call was never made)."""
        if reservation.settled:
            return
        group, reservation.group = reservation.group, None
        for budget, part in group or ():
            budget.release(part)
        super().release(reservation)


def _give_back(held: Sequence[tuple[Budget, Sequence[Reservation]]]) -> None:
    for budget, got in held:
        for r in got:
            budget.release(r)


class CostCaps:
    """The caps' budgets, made on first use and kept (see the module)."""

    def __init__(self, settings: Settings, judge: Any) -> None:
        self._settings = settings
        ledger = getattr(judge, "ledger", None)
        self._ledger = ledger if isinstance(ledger, Ledger) else None
        self._budgets: dict[tuple[str, float], Budget] = {}
        """By name and limit: a rule changed over gRPC to another cap gets a budget of that
        limit (shared ones keep what was spent under their name)."""

    def budget(self, rule: Rule, tenant: str) -> AllOf | None:
        """What the rule's judge calls for `tenant`'s observations are held in; None when
        no cap applies."""
        s = self._settings
        caps = [
            (f"rule:{rule.name}:hour", rule_cap(rule, "hour_usd", s), HOUR_S),
            (f"rule:{rule.name}:day", rule_cap(rule, "day_usd", s), DAY_S),
            (f"tenant:{tenant}:hour", s.observe_tenant_cost_cap_hour_usd, HOUR_S),
            (f"tenant:{tenant}:day", s.observe_tenant_cost_cap_day_usd, DAY_S),
        ]
        budgets = [self._get(n, limit, p) for n, limit, p in caps if limit is not None]
        return AllOf(budgets) if budgets else None

    def _get(self, name: str, limit: float, period_s: float) -> Budget:
        budget = self._budgets.get((name, limit))
        if budget is None:
            if self._ledger is not None:
                budget = SharedBudget(self._ledger, f"observe:{name}", limit, period_s=period_s)
            else:
                budget = PeriodBudget(limit, period_s)
            self._budgets[(name, limit)] = budget
        return budget


def rule_cap(rule: Rule, key: str, settings: Settings) -> float | None:
    """The rule's own cap `key` (`hour_usd`, `day_usd`), else the setting's default."""
    if key in rule.cost_caps:
        return rule.cost_caps[key]
    if key == "hour_usd":
        return settings.observe_rule_cost_cap_hour_usd
    return settings.observe_rule_cost_cap_day_usd


def capped(rule: Rule, settings: Settings) -> bool:
    """Whether some cap holds the rule's judge calls."""
    return any(
        v is not None
        for v in (
            rule_cap(rule, "hour_usd", settings),
            rule_cap(rule, "day_usd", settings),
            settings.observe_tenant_cost_cap_hour_usd,
            settings.observe_tenant_cost_cap_day_usd,
        )
    )


def check_rule_prices(
    rules: Sequence[Rule], settings: Settings, judge: Any, paths: Sequence[str]
) -> None:
    """SpecError naming every judge check, under a cap, that this server cannot price (or
    call at all); `paths` are where the rules are (`rules[0]`, or `rule`)."""
    bad: list[FieldViolation] = []
    for rule, path in zip(rules, paths, strict=True):
        if not capped(rule, settings):
            continue
        needs = judge_needs(zip(_paths(rule), rule.plan.checks, strict=True))
        for p in check_judges(needs, judge, budgeted=True, credentials=False):
            where = f"{path}.{p.field}"
            bad.append(FieldViolation(where, f"{p.description} ({p.setting}): under a cost cap"))
    if bad:
        raise SpecError(bad)


def _paths(rule: Rule) -> list[str]:
    """Each compiled check's field in the rule: structured ones first, then compact lines
    (a compact line compiles to one check)."""
    n = len(rule.checks)
    return [f"checks[{i}]" if i < n else f"compact[{i - n}]" for i in range(len(rule.plan.checks))]
