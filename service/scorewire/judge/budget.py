"""Judge spend limits: a run's budget and the server-wide budget per period.

A call reserves its worst-case cost (its *ceiling*: the whole prompt and all of
`max_tokens` at the model's price) before it starts and settles the real cost when it
ends. A call may start only while spent + reserved + its ceiling stays within the
limit. One whose ceiling no longer fits beside what is already spent is refused at once:
calls in flight can only add to that, so waiting could not help. One that fits only once
calls in flight settle queues behind the budget: the queue is served first come, first
served as settles give unused ceiling back (a newcomer never overtakes it, and a large
reservation is not starved by small ones), each waiter held or refused in turn, and a
waiter leaves it when its request's deadline cancels it. Because the usage a call
reports is checked against the same bounds (`scorewire.judge.pricing.usage_problem`),
what is spent never exceeds the limit, however many calls run at once.

So what stays unspent when a budget refuses is less than one ceiling: a run whose calls
cost far less than their ceilings (a large `max_tokens`) stops while most of its budget
is left, because the next call *could* cost its whole ceiling.
"""

from __future__ import annotations

import asyncio
import collections
import math
import time
from collections.abc import Callable, Sequence
from typing import Any


class BudgetUnavailable(Exception):
    """A shared budget's store (Redis) did not answer: no call may start unmetered."""


class Reservation:
    """Money held for one judge call until it settles."""

    __slots__ = ("amount", "group", "parent", "settled", "shared_id")

    def __init__(
        self,
        amount: float,
        parent: Reservation | None = None,
        shared_id: str | None = None,
        group: Any = None,
    ) -> None:
        self.amount = amount
        self.settled = False
        self.parent = parent
        """The same money held in the parent budget, if there is one."""
        self.shared_id = shared_id
        """The hold's id in a shared budget's store; None when it is held in this process."""
        self.group = group
        """A shared budget's one hold behind several reservations (`reserve_all`), if any."""


class _Waiter:
    """A reservation queued behind a budget: its amount, its calls, and its turn (True
    once held, False when refused)."""

    __slots__ = ("amount", "calls", "turn")

    def __init__(self, amount: float, calls: int, turn: asyncio.Future[bool]) -> None:
        self.amount = amount
        self.calls = calls
        self.turn = turn


class Budget:
    """A judge spend limit in USD, shared by every check of one run.

    Put one on `CheckContext.budget`; judge-backed checks reserve from it before each
    call. `limit_usd=None` only counts spending.
    """

    def __init__(self, limit_usd: float | None, *, parent: Budget | None = None) -> None:
        if limit_usd is not None and limit_usd < 0:
            raise ValueError("a budget cannot be negative")
        self.parent = parent
        """A budget every reservation is also held in (a caller's budget per period)."""
        self.limit_usd = limit_usd
        """The limit, or None for no limit."""
        self.spent_usd = 0.0
        """Dollars settled so far (priced calls only)."""
        self.reserved_usd = 0.0
        """Dollars held by calls in flight."""
        self.in_flight = 0
        """Calls holding a reservation."""
        self.calls = 0
        """Calls settled so far."""
        self.unpriced_calls = 0
        """Settled calls whose cost is unknown: a model without a price, allowed to run (a
        priced call that reported no usage is settled at its ceiling)."""
        self._queue: collections.deque[_Waiter] = collections.deque()

    @property
    def exhausted(self) -> bool:
        """True once the spent amount has reached the limit (here or in the parent)."""
        own = self.limit_usd is not None and self.spent_usd >= self.limit_usd
        return own or (self.parent is not None and self.parent.exhausted)

    def remaining_usd(self) -> float | None:
        """Dollars left in the current period (None without a limit); never negative."""
        self._roll()
        if self.limit_usd is None:
            return None
        return max(0.0, self.limit_usd - self.spent_usd)

    def _fits(self, amount: float) -> bool:
        """Whether `amount` fits beside what is spent (calls in flight may still settle)."""
        if self.limit_usd is None:
            return True
        return self.spent_usd < self.limit_usd and self.spent_usd + amount <= self.limit_usd

    def _may_start(self, amount: float) -> bool:
        if self.limit_usd is None:
            return True
        return self.spent_usd + self.reserved_usd + amount <= self.limit_usd

    async def reserve(self, amount_usd: float) -> Reservation | None:
        """Hold `amount_usd` (a call's ceiling) for one call; None when it cannot fit.

        Waits in turn while calls in flight hold what is left: when they settle, their
        real cost decides whether this call may still run. A shared budget whose store
        does not answer raises `BudgetUnavailable` (unless it is set to fail open).
        """
        held = await self.reserve_all([amount_usd])
        return None if held is None else held[0]

    async def reserve_all(self, amounts_usd: Sequence[float]) -> list[Reservation] | None:
        """Hold one reservation per amount, all or none (several calls of one score).

        The sum must fit as one call's ceiling would: refused when it cannot fit beside
        what is spent, waited for while calls in flight hold what is left.
        """
        parents: list[Reservation] | None = None
        if self.parent is not None:
            parents = await self.parent.reserve_all(amounts_usd)
            if parents is None:
                return None
        try:
            own = await self._hold_all(amounts_usd)
        except BaseException:
            self._release_parents(parents)
            raise
        if own is None:
            self._release_parents(parents)
            return None
        if parents is not None:
            for r, up in zip(own, parents, strict=True):
                r.parent = up
        return own

    async def _hold_all(self, amounts_usd: Sequence[float]) -> list[Reservation] | None:
        """Hold every amount in this budget alone, all or none (the parent is the caller's)."""
        if len(amounts_usd) == 1:
            one = await self._hold(amounts_usd[0])
            return None if one is None else [one]
        if not await self._take(math.fsum(amounts_usd), len(amounts_usd)):
            return None
        return [Reservation(a) for a in amounts_usd]

    async def _hold(self, amount_usd: float) -> Reservation | None:
        """Hold `amount_usd` in this budget alone (the parent is the caller's business)."""
        return Reservation(amount_usd) if await self._take(amount_usd, 1) else None

    async def _take(self, total: float, calls: int) -> bool:
        """Hold `total` for `calls` calls: at once when it fits and nobody is queued, else
        in turn behind the reservations queued before it; False when it can never fit."""
        self._roll()
        if not self._fits(total):
            return False
        if not self._queue and self._may_start(total):
            self._add(total, calls)
            return True
        waiter = _Waiter(total, calls, asyncio.get_running_loop().create_future())
        self._queue.append(waiter)
        try:
            return await waiter.turn
        except asyncio.CancelledError:
            # Its deadline, or the caller went away: leave the queue, giving back what
            # was held for it if its turn came as it was cancelled.
            if waiter.turn.done() and not waiter.turn.cancelled() and waiter.turn.result():
                self._add(-total, -calls)
            if waiter in self._queue:
                self._queue.remove(waiter)
            self._serve()  # it may have been the one the others waited behind
            raise

    def _add(self, amount: float, calls: int) -> None:
        self.in_flight += calls
        # with nothing in flight nothing is held (no float residue of the subtractions)
        self.reserved_usd = max(0.0, self.reserved_usd + amount) if self.in_flight else 0.0

    def _serve(self) -> None:
        """Hold or refuse queued reservations in order, up to the first that must still
        wait for calls in flight to settle."""
        self._roll()
        while self._queue:
            waiter = self._queue[0]
            if waiter.turn.done():  # cancelled; its own handler is leaving
                self._queue.popleft()
                continue
            fits = self._fits(waiter.amount)  # False: refused, it never will
            if fits and not self._may_start(waiter.amount):
                return
            if fits:
                self._add(waiter.amount, waiter.calls)
            self._queue.popleft()
            waiter.turn.set_result(fits)

    def _release_parents(self, parents: list[Reservation] | None) -> None:
        if parents is not None and self.parent is not None:
            for up in parents:
                self.parent.release(up)

    def settle(self, reservation: Reservation, cost_usd: float | None) -> None:
        """Release a reservation and record the call's real cost (None: unknown).

        A negative or NaN cost is never a refund: the reservation is charged instead.
        """
        if reservation.settled:
            return
        if cost_usd is not None and not cost_usd >= 0:
            cost_usd = reservation.amount
        reservation.settled = True
        self._settle_own(reservation, cost_usd)
        if reservation.parent is not None and self.parent is not None:
            self.parent.settle(reservation.parent, cost_usd)

    def _settle_own(self, reservation: Reservation, cost_usd: float | None) -> None:
        """Release `reservation` here and record its cost (a valid one, or None)."""
        self._roll()
        self._add(-reservation.amount, -1)
        self.calls += 1
        if cost_usd is None:
            self.unpriced_calls += 1
        else:
            self.spent_usd += cost_usd
        self._serve()

    def release(self, reservation: Reservation) -> None:
        """Give a reservation back for a call that was never made or cost nothing."""
        if reservation.settled:
            return
        parent, reservation.parent = reservation.parent, None
        self.settle(reservation, 0.0)
        self.calls -= 1
        if parent is not None and self.parent is not None:
            self.parent.release(parent)

    def _roll(self) -> None:
        """Start a new period if one has passed (only periodic budgets have periods)."""

    def __repr__(self) -> str:
        return (
            f"Budget(limit_usd={self.limit_usd}, spent_usd={self.spent_usd:.6f}, "
            f"in_flight={self.in_flight})"
        )


class PeriodBudget(Budget):
    """A server-wide limit that starts afresh every `period_s` (windows aligned to the epoch).

    It lives in one process: replicas each have their own.
    """

    def __init__(
        self,
        limit_usd: float,
        period_s: float,
        *,
        clock: Callable[[], float] = time.time,
    ) -> None:
        super().__init__(limit_usd)
        if period_s <= 0:
            raise ValueError("a budget period must be positive")
        self.period_s = period_s
        self._clock = clock
        self._window = self._current_window()

    def _current_window(self) -> int:
        return int(self._clock() // self.period_s)

    def _roll(self) -> None:
        window = self._current_window()
        if window != self._window:
            self._window = window
            self.spent_usd = 0.0
