"""Single flight within a process: one judge call shared by every check asking it.

A check asking a question already in flight (same flight key: the verdict key, and the
tenant unless tenants trust each other) joins that flight instead of making a call of its
own. The flight's task hands its outcome to every waiting check, stores its verdict while
it stays joinable, lands (the next check asking starts its own) and gives its
single-flight lease back. Cancelling every check waiting on a flight cancels the flight
itself.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Awaitable, Callable
from typing import Any

from scorewire.judge.budget import Budget, Reservation
from scorewire.judge.cache_entry import CachedAnswer

Held = list[tuple[Budget, Reservation]]
"""Reservations held for one judge call, one per budget it is charged to."""


class Outcome:
    """The shared result of one flight: a parsed verdict or an error, and its cost."""

    __slots__ = (
        "answered_at",
        "ceiling_cost",
        "cost_usd",
        "error_code",
        "error_message",
        "from_cache",
        "model",
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
        model: str = "",
        answered_at: float | None = None,
    ) -> None:
        self.value = value
        self.model = model
        """The model the provider reported answering (empty when unknown)."""
        self.answered_at = answered_at
        """When the judge gave the verdict, in seconds since the epoch (one read from the
        cache: its entry's `CachedAnswer.at`, 0 when the entry does not say); None for no
        verdict. A check that asked the judges again takes none given before its request
        began: one from the cache, or one a flight it joined had already received."""
        self.error_code = error_code
        self.error_message = error_message
        self.cost_usd = cost_usd
        self.unpriced = unpriced
        self.from_cache = from_cache
        self.ceiling_cost = ceiling_cost


class Flight:
    """One request in flight, shared by every check asking the same question."""

    __slots__ = (
        "budget",
        "deadline",
        "fresh_since",
        "held",
        "key",
        "lease",
        "outcome",
        "store",
        "task",
        "tenant",
        "woken",
    )  # fmt: skip

    def __init__(
        self,
        key: str,
        deadline: float | None,
        budget: Budget | None,
        tenant: str | None,
        held: Held | None = None,
        fresh_since: float | None = None,
    ) -> None:
        self.key = key
        """The verdict key (`cache_entry.verdict_key`) of the question asked."""
        self.task: asyncio.Task[Outcome] | None = None
        self.woken: list[asyncio.Future[Outcome]] = []
        """One future per check waiting, resolved by the flight's task as it ends."""
        self.deadline = deadline
        self.budget = budget
        self.tenant = tenant
        self.held = held
        """Money reserved for this call before it was asked (`JudgeService.prepay`)."""
        self.fresh_since = fresh_since
        """Cached verdicts answered before this time (seconds since the epoch) are not
        read: the check leading the flight asked the judges again (None: any is read)."""
        self.lease: str | None = None
        """The single-flight lease this flight holds until its verdict is stored."""
        self.store: CachedAnswer | None = None
        """The verdict to store once the waiting checks have it (`Flights(store)`)."""
        self.outcome: Outcome | None = None
        """The flight's outcome, once known (a check joining while it is stored takes it)."""

    def join(self, deadline: float | None) -> None:
        """Extend the deadline to the latest of the waiters' (None means unbounded)."""
        if self.deadline is not None:
            self.deadline = None if deadline is None else max(self.deadline, deadline)

    def remaining(self) -> float | None:
        """Seconds left before the deadline (None without one)."""
        return None if self.deadline is None else self.deadline - time.monotonic()


def _wake(flight: Flight, outcome: Outcome) -> None:
    """Hand `outcome` to every check waiting on `flight` that does not have it yet."""
    for woken in flight.woken:
        if not woken.done():
            woken.set_result(outcome)


def _wake_failed(flight: Flight, err: BaseException) -> None:
    """End the wait of every check on `flight` that ended without an outcome: cancelled
    with it, or raising what it raised."""
    for woken in flight.woken:
        if not woken.done():
            if isinstance(err, asyncio.CancelledError):
                woken.cancel()
            else:
                woken.set_exception(err)


class Flights:
    """The judge calls in flight in this process, by flight key."""

    def __init__(
        self,
        *,
        store: Callable[[Flight], Awaitable[None]],
        give_back: Callable[[Flight], Awaitable[None]],
    ) -> None:
        """`store`: keep a flight's verdict (`Flight.store`) once its checks have it, the
        flight still joinable; `give_back`: give back its lease once it landed."""
        self._store = store
        self._give_back = give_back
        self._flying: dict[str, Flight] = {}

    def __len__(self) -> int:
        """Flights in progress, their verdicts' stores included."""
        return len(self._flying)

    def get(self, flight_key: str) -> Flight | None:
        """The flight a check asking under `flight_key` joins, or None."""
        return self._flying.get(flight_key)

    def start(
        self, flight_key: str, flight: Flight, resolve: Callable[[], Awaitable[Outcome]]
    ) -> None:
        """Run `resolve()` as `flight`'s task, joinable under `flight_key` until it lands."""
        task = asyncio.get_running_loop().create_task(self._fly(flight_key, flight, resolve))
        flight.task = task
        self._flying[flight_key] = flight

        def settle(_: asyncio.Task[Outcome]) -> None:
            # A task cancelled before its first step never ran `_fly`'s own handlers.
            self.land(flight_key, flight)
            _wake_failed(flight, asyncio.CancelledError())

        task.add_done_callback(settle)

    async def _fly(
        self, flight_key: str, flight: Flight, resolve: Callable[[], Awaitable[Outcome]]
    ) -> Outcome:
        """`resolve()` as the flight's task: it leaves the table and hands its outcome to
        every waiting check in its last step.

        A check awaiting the task through `asyncio.shield` heard of it two turns of the
        event loop later (the shield's callback, then the check's), each turn waiting
        behind every ready callback: ~1 ms a judge check at concurrency 32.
        """
        try:
            outcome = await resolve()
        except BaseException as err:
            self.land(flight_key, flight)
            _wake_failed(flight, err)
            await self._give_back(flight)
            raise
        flight.outcome = outcome
        _wake(flight, outcome)
        try:
            # The checks have their verdict; now the cache gets it. The flight stays
            # joinable until it is stored, so that a question asked meanwhile shares
            # this call rather than paying for another; and the single-flight lease is
            # given back only with (or after) the store.
            if flight.store is not None:
                await self._store(flight)
        finally:
            self.land(flight_key, flight)
            _wake(flight, outcome)  # the checks that joined while it was stored
            await self._give_back(flight)
        return outcome

    def land(self, flight_key: str, flight: Flight) -> None:
        """A flight that ended is no longer joined: the next ask starts its own."""
        if self._flying.get(flight_key) is flight:
            del self._flying[flight_key]

    async def wait(self, flight_key: str, flight: Flight) -> Outcome:
        """`flight`'s outcome; the last check to stop waiting cancels the flight."""
        task = flight.task
        assert task is not None
        if task.done():
            return task.result()
        if flight.outcome is not None:  # answered; only its store is still under way
            return flight.outcome
        woken: asyncio.Future[Outcome] = asyncio.get_running_loop().create_future()
        flight.woken.append(woken)
        try:
            return await woken  # cancelling this check cancels `woken`, not the flight
        except asyncio.CancelledError:
            if len(flight.woken) == 1 and not task.done():  # only this check's own
                # The last check waiting went away (its deadline, or a cancelled stream):
                # stop the call rather than pay for a verdict nobody reads, and let it
                # end (its attempt closed, its reservation given back) before the check does.
                task.cancel()
                self.land(flight_key, flight)
                await asyncio.wait((task,))
            raise
        finally:
            with contextlib.suppress(ValueError):
                flight.woken.remove(woken)

    async def close(self) -> None:
        """Cancel every flight and wait for them to end."""
        tasks = [f.task for f in self._flying.values() if f.task is not None]
        self._flying.clear()
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
