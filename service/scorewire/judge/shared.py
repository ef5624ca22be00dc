"""Budgets and single flight shared by every worker and replica, in Redis.

**Budgets.** A `SharedBudget` is a `Budget` whose money lives in Redis: its spent total
(a float counter) and its holds (a hash, hold id -> `amount:expiry_ms`). One Lua script,
registered once per process, reserves atomically under the same rule as in process: a
call may start only while spent + held + its ceiling stays within the limit; one whose
ceiling no longer fits beside what is spent is refused (for good: spent only grows
within a period); one that fits only once holds settle waits. Settling removes the hold
and adds the real cost in one script call, sent as soon as the call ends. So across N
processes, as in one, what is spent exceeds the limit only by what calls in flight spend
beyond their ceilings, which the usage check (`pricing.usage_problem`) makes zero: the
bound is the limit itself. Two leaks are bounded rather than closed: a process that dies
holding money keeps it held until the hold expires (`budget_reservation_ttl_s`), and a
settle that Redis does not accept (retried `SETTLE_TRIES` times) leaves the hold to
expire, the call's cost uncounted.

Waiting: within one process, reservations that must wait queue in arrival order (a
newcomer does not overtake them) and the first of them tries again as soon as a hold of
this process is settled in Redis, else after `budget_poll_s`, doubling up to
`MAX_POLL_S` (another replica's settle reaches it only through that poll). Across
replicas there is no queue: each replica's first waiter tries when it polls or hears its
own settles, and whichever reaches Redis first when money frees takes it.

Redis time (`TIME`) dates holds, so replicas' clocks do not matter there; a period's
window is computed from this process's clock, aligned to the epoch as in process
(`scorewire:budget:{..}:server:<window>`).

With Redis unreachable, reserving raises `BudgetUnavailable` (the judge call is refused
with BUDGET_UNAVAILABLE: never an unmetered call), unless the budget fails open, in
which case the process falls back to holding the money in its own copy of the budget
(N replicas may then spend N times the limit while Redis is down; logged and counted).

**Single flight.** `VerdictLeases` takes a short lease on a verdict key (`SET NX PX`)
before a call; a replica that finds the lease taken polls the verdict cache until the
verdict appears, the lease is released or lapses (then it takes the lease itself), or
`single_flight_wait_s` passes, after which it calls anyway: a dead holder never blocks.

**After an outage.** A reserve or a lease Redis did not answer in time may still be made
when Redis gets to it (`Leftovers`): each is taken back once Redis answers again, so
that the first calls after a Redis that hung are neither held up nor refused by money
and leases nobody will give back.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import os
import time
import uuid
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from scorewire.judge.budget import Budget, BudgetUnavailable, Reservation
from scorewire.judge.stats import JudgeStats

log = logging.getLogger(__name__)

PREFIX = "scorewire:budget:{b}:"
"""Prefix of every budget key; the hash tag keeps one budget's keys in one Cluster slot."""

LEASE_PREFIX = "scorewire:lease:"
"""Prefix of single-flight lease keys."""

SETTLE_TRIES = 3
"""Attempts to settle a hold in Redis before leaving it to expire."""

MAX_POLL_S = 0.5
"""Longest wait between two tries of a reservation waiting for other replicas' holds."""

_WAIT = 2
"""The reserve script's answer: the ceiling fits only once holds settle."""

MAX_LEFTOVERS = 10_000
"""Most holds and leases `Leftovers` keeps to take back (a bound on memory through a long
outage); past it, the rest lapse by themselves, as all of them did before."""

# KEYS: spent, holds. ARGV: limit (negative: none), amount, hold id, hold ttl ms, key ttl s.
# Returns {status, spent}: 1 held, 0 refused (does not fit beside what is spent),
# 2 wait (fits only once holds settle).
RESERVE_LUA = """
local spent_text = redis.call('GET', KEYS[1]) or '0'
local spent = tonumber(spent_text)
local limit = tonumber(ARGV[1])
local amount = tonumber(ARGV[2])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
if limit >= 0 then
  if spent >= limit or spent + amount > limit then
    return {0, spent_text}
  end
  local held = 0
  local entries = redis.call('HGETALL', KEYS[2])
  for i = 1, #entries, 2 do
    local v = entries[i + 1]
    local sep = string.find(v, ':', 1, true)
    local expires = tonumber(string.sub(v, sep + 1))
    if expires <= now then
      redis.call('HDEL', KEYS[2], entries[i])
    else
      held = held + tonumber(string.sub(v, 1, sep - 1))
    end
  end
  if spent + held + amount > limit then
    return {2, spent_text}
  end
end
redis.call('HSET', KEYS[2], ARGV[3], ARGV[2] .. ':' .. (now + tonumber(ARGV[4])))
redis.call('EXPIRE', KEYS[2], tonumber(ARGV[5]))
return {1, spent_text}
"""

# KEYS: spent, holds. ARGV: hold id, cost, key ttl s. Returns the new spent total.
SETTLE_LUA = """
redis.call('HDEL', KEYS[2], ARGV[1])
local cost = tonumber(ARGV[2])
if cost > 0 then
  redis.call('INCRBYFLOAT', KEYS[1], ARGV[2])
end
redis.call('EXPIRE', KEYS[1], tonumber(ARGV[3]))
return redis.call('GET', KEYS[1]) or '0'
"""

# KEYS: lease. ARGV: token. Deletes the lease only while it is still ours.
RELEASE_LUA = """
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0
"""


class Leftovers:
    """Holds and leases that Redis commands which did not answer in time may still make,
    taken back once Redis answers again.

    A command sent to a Redis that stopped answering (frozen, or its host away) stays in
    Redis's socket buffer after the client gave up on it, and runs when Redis resumes: a
    reserve then holds money nobody settles (for `budget_reservation_ttl_s`), and a lease
    blocks its verdict key for every replica (for `single_flight_lease_s`), so the first
    calls after the outage waited for them or were refused. Each is taken back in the
    background: while Redis does not answer, one removal at a time tries it (every
    `interval_s`); once one is answered, every removal is sent, and a removal counts as
    done only when it is answered after an earlier answer, since Redis runs what waited in
    its buffers no later than the first command it answers after resuming.
    """

    def __init__(self, *, timeout_s: float, interval_s: float) -> None:
        self._timeout_s = timeout_s
        self._interval_s = interval_s
        self._pending: dict[str, tuple[Callable[[], Awaitable[object]], float]] = {}
        self._task: asyncio.Task[None] | None = None

    def __len__(self) -> int:
        return len(self._pending)

    def add(self, name: str, take_back: Callable[[], Awaitable[object]], ttl_s: float) -> None:
        """Take back `name` (a hold, a lease) with `take_back()` once Redis answers, unless
        it lapses by itself first (`ttl_s`)."""
        if name in self._pending:
            return
        if len(self._pending) >= MAX_LEFTOVERS:
            log.debug("Redis leftovers: %d waiting, %s left to lapse", MAX_LEFTOVERS, name)
            return
        self._pending[name] = (take_back, time.monotonic() + ttl_s)
        if self._task is None or self._task.done():
            self._task = asyncio.get_running_loop().create_task(self._sweep())

    async def _sweep(self) -> None:
        answered = False  # whether Redis answered the round before this one
        while self._pending:
            now = time.monotonic()
            for name in [n for n, (_, until) in self._pending.items() if until <= now]:
                del self._pending[name]
            answering = True
            for name in list(self._pending)[: None if answered else 1]:
                entry = self._pending.get(name)
                if entry is None:
                    continue
                if not await self._try(entry[0]):
                    answering = False
                    break
                if answered:
                    del self._pending[name]
            answered = answering
            if not answering:
                await asyncio.sleep(self._interval_s)

    async def _try(self, take_back: Callable[[], Awaitable[object]]) -> bool:
        try:
            async with asyncio.timeout(self._timeout_s):
                await take_back()
        except asyncio.CancelledError:
            raise
        except Exception:
            return False
        return True

    async def aclose(self) -> None:
        """Stop taking back (what is left lapses by itself)."""
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task


class Ledger:
    """The Redis side of shared budgets: one client, the scripts, and the settings."""

    def __init__(
        self,
        client: Any,
        *,
        stats: JudgeStats,
        description: str,
        timeout_s: float = 0.5,
        hold_ttl_s: float = 900.0,
        poll_s: float = 0.05,
        fail_open: bool = False,
    ) -> None:
        self.client = client
        self.stats = stats
        self.description = description
        """The Redis address without credentials (for logs)."""
        self.timeout_s = timeout_s
        self.hold_ttl_s = hold_ttl_s
        self.poll_s = poll_s
        self.fail_open = fail_open
        """Whether a budget whose Redis does not answer falls back to this process."""
        self._reserve = client.register_script(RESERVE_LUA)
        self._settle = client.register_script(SETTLE_LUA)
        self.release_lease = client.register_script(RELEASE_LUA)
        self._tasks: set[asyncio.Task[None]] = set()
        self._warned_at = -1e9
        self.leftovers = Leftovers(timeout_s=timeout_s, interval_s=timeout_s)
        """Holds (and the leases on this client) to take back once Redis answers."""

    async def reserve(
        self, keys: tuple[str, str], limit: float | None, amount: float, key_ttl_s: int
    ) -> tuple[int, float, str]:
        """One reserve attempt: (status, spent, hold id); raises on a Redis failure, after
        which the hold, if Redis makes it later, is taken back (`Leftovers`)."""
        hold = uuid.uuid4().hex
        try:
            async with asyncio.timeout(self.timeout_s):
                status, spent = await self._reserve(
                    keys=list(keys),
                    args=[
                        -1 if limit is None else repr(float(limit)),
                        repr(float(amount)),
                        hold,
                        int(self.hold_ttl_s * 1000),
                        key_ttl_s,
                    ],
                )
        except BaseException:  # a failure, or the caller gone: the answer was not read
            self.leftovers.add(
                f"hold {keys[1]} {hold}",
                lambda: self.client.hdel(keys[1], hold),
                self.hold_ttl_s,
            )
            raise
        return int(status), float(spent), hold

    def settle_later(
        self,
        keys: tuple[str, str],
        hold: str,
        cost: float,
        key_ttl_s: int,
        done: Callable[[], None] | None = None,
    ) -> None:
        """Settle a hold in the background (`Budget.settle` is synchronous); `done` is
        called once the hold has left Redis (settled, or left to lapse)."""
        task = asyncio.get_running_loop().create_task(
            self._settle_hold(keys, hold, cost, key_ttl_s)
        )
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        if done is not None:
            task.add_done_callback(lambda _: done())

    async def _settle_hold(
        self, keys: tuple[str, str], hold: str, cost: float, key_ttl_s: int
    ) -> None:
        for attempt in range(SETTLE_TRIES):
            try:
                async with asyncio.timeout(self.timeout_s):
                    await self._settle(keys=list(keys), args=[hold, repr(float(cost)), key_ttl_s])
                return
            except asyncio.CancelledError:
                raise
            except Exception as err:
                if attempt + 1 == SETTLE_TRIES:
                    self.stats.add("budget_settle_failures")
                    log.warning(
                        "shared budget %s: settling $%.6f failed (%s); the hold lapses in "
                        "%.0f s and that cost goes uncounted",
                        self.description,
                        cost,
                        type(err).__name__,
                        self.hold_ttl_s,
                    )
                    return
                await asyncio.sleep(self.poll_s * (attempt + 1))

    def unavailable(self, err: BaseException) -> None:
        """Count and (at most every 10 s) log a Redis failure of a budget."""
        self.stats.add("budget_unavailable")
        now = time.monotonic()
        if now - self._warned_at >= 10.0:
            self._warned_at = now
            log.warning(
                "shared budget %s: Redis did not answer (%s); judge calls are %s",
                self.description,
                type(err).__name__,
                "metered by this process alone" if self.fail_open else "refused",
            )

    async def aclose(self) -> None:
        """Wait briefly for settles in flight, then close the client."""
        if self._tasks:
            await asyncio.wait(set(self._tasks), timeout=2 * self.timeout_s * SETTLE_TRIES)
        await self.leftovers.aclose()
        try:
            await self.client.aclose()
        except Exception:
            log.debug("shared budget client close failed", exc_info=True)


class _HoldGroup:
    """One shared hold behind several reservations of one score."""

    __slots__ = ("charge", "left", "n", "unpriced", "whole")

    def __init__(self, whole: Reservation, n: int) -> None:
        self.whole = whole
        self.n = n
        self.left = n
        self.charge = 0.0
        self.unpriced = 0


class SharedBudget(Budget):
    """A budget held in Redis (`Ledger`), per period when `period_s` is set.

    `name` identifies it across processes: `server`, `token:<digest>`, `run:<id>`.
    Its own counters (`spent_usd`, `calls`) are this process's share, for metrics;
    `remaining_usd()` is the shared figure as of the last reserve.
    """

    def __init__(
        self,
        ledger: Ledger,
        name: str,
        limit_usd: float,
        *,
        period_s: float | None = None,
        key_ttl_s: int | None = None,
        parent: Budget | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        super().__init__(limit_usd, parent=parent)
        if period_s is not None and period_s <= 0:
            raise ValueError("a budget period must be positive")
        self.ledger = ledger
        self.name = name
        self.period_s = period_s
        self._clock = clock
        # A period's keys outlive it by one period (settles of calls that straddle it).
        self._key_ttl = key_ttl_s or int(2 * (period_s or 86_400)) + 60
        self._shared_spent = 0.0
        self._window = self._current_window()
        self._line = asyncio.Lock()
        """Held by this process's first reservation waiting for holds to settle; the
        others queue for it in arrival order (asyncio's lock is first come, first served)."""
        self._settled: asyncio.Future[None] | None = None
        """Resolved when a hold of this process next leaves Redis (what the waiter awaits)."""

    def _current_window(self) -> int:
        return 0 if self.period_s is None else int(self._clock() // self.period_s)

    def _keys(self, window: int) -> tuple[str, str]:
        base = f"{PREFIX}{self.name}" + (f":{window}" if self.period_s is not None else "")
        return base + ":spent", base + ":holds"

    def _roll(self) -> None:
        window = self._current_window()
        if window != self._window:
            self._window = window
            self.spent_usd = 0.0
            self._shared_spent = 0.0

    @property
    def exhausted(self) -> bool:
        """True once the shared spent total (as last seen) has reached the limit."""
        own = self.limit_usd is not None and self._shared_spent >= self.limit_usd
        return own or (self.parent is not None and self.parent.exhausted)

    def remaining_usd(self) -> float | None:
        """Dollars left in the shared budget as of the last reserve; never negative."""
        self._roll()
        if self.limit_usd is None:
            return None
        return max(0.0, self.limit_usd - max(self._shared_spent, self.spent_usd))

    async def _hold(self, amount_usd: float) -> Reservation | None:
        if not self._line.locked():  # nobody of this process waits: one try, at once
            held = await self._try(amount_usd)
            if held != _WAIT:
                return held if isinstance(held, Reservation) else None
        async with self._line:
            delay = self.ledger.poll_s
            while True:
                settled = self._next_settle()  # before the try: a settle meanwhile counts
                held = await self._try(amount_usd)
                if held != _WAIT:
                    return held if isinstance(held, Reservation) else None
                # Others' holds take what is left: wait until one of ours leaves Redis,
                # or (another replica's) for the poll's delay.
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(delay):
                        await settled
                delay = min(delay * 2, MAX_POLL_S)

    async def _try(self, amount_usd: float) -> Reservation | int | None:
        """One reserve in Redis: the hold, `_WAIT`, or None (refused)."""
        self._roll()
        window = self._window
        if self.limit_usd is not None and self._shared_spent + amount_usd > self.limit_usd:
            return None  # spent only grows: Redis would refuse it too
        try:
            status, spent, hold = await self.ledger.reserve(
                self._keys(window), self.limit_usd, amount_usd, self._key_ttl
            )
        except asyncio.CancelledError:
            raise
        except Exception as err:
            self.ledger.unavailable(err)
            if self.ledger.fail_open:
                return await super()._hold(amount_usd)
            raise BudgetUnavailable(
                f"the shared judge budget's Redis ({self.ledger.description}) did not "
                "answer; the call was not made (SCOREWIRE_BUDGET_FAIL_OPEN lets it run, "
                "metered by this process alone)"
            ) from None
        if window == self._window:
            self._shared_spent = max(self._shared_spent, spent)
        if status == 0:
            return None
        if status == _WAIT:
            return _WAIT
        self._add(amount_usd, 1)
        return Reservation(amount_usd, shared_id=f"{window}:{hold}")

    def _next_settle(self) -> asyncio.Future[None]:
        """A future resolved when a hold of this process next leaves Redis."""
        if self._settled is None or self._settled.done():
            self._settled = asyncio.get_running_loop().create_future()
        return self._settled

    def _hold_left(self) -> None:
        """A hold of this process has left Redis: the waiting reservation tries again."""
        if self._settled is not None and not self._settled.done():
            self._settled.set_result(None)

    async def _hold_all(self, amounts_usd: Sequence[float]) -> list[Reservation] | None:
        """Several calls of one score (judge samples) as ONE hold of their sum in Redis,
        settled with their summed cost when the last of them settles: holding them one by
        one could wait on this score's own holds."""
        if len(amounts_usd) == 1:
            return await super()._hold_all(amounts_usd)
        whole = await self._hold(math.fsum(amounts_usd))
        if whole is None:
            return None
        group = _HoldGroup(whole, len(amounts_usd))
        return [Reservation(a, shared_id=whole.shared_id, group=group) for a in amounts_usd]

    def _settle_own(self, reservation: Reservation, cost_usd: float | None) -> None:
        group = reservation.group
        if isinstance(group, _HoldGroup):
            group.left -= 1
            if cost_usd is None:
                group.unpriced += 1
            else:
                group.charge += cost_usd
            if group.left:
                return
            priced = group.n - group.unpriced
            self._settle_own(group.whole, group.charge if priced else None)
            # one hold settled above; the score made n calls
            self.calls += group.n - 1
            self.unpriced_calls += group.unpriced - (0 if priced else 1)
            return
        if reservation.shared_id is None:  # held in this process (failed open)
            super()._settle_own(reservation, cost_usd)
            return
        window, hold = reservation.shared_id.split(":", 1)
        charge = 0.0 if cost_usd is None else cost_usd
        self.ledger.settle_later(
            self._keys(int(window)), hold, charge, self._key_ttl, done=self._hold_left
        )
        self._add(-reservation.amount, -1)
        self.calls += 1
        if cost_usd is None:
            self.unpriced_calls += 1
        else:
            self.spent_usd += cost_usd
            self._shared_spent += cost_usd

    def __repr__(self) -> str:
        return f"SharedBudget({self.name!r}, limit_usd={self.limit_usd})"


class VerdictLeases:
    """Single flight across replicas: a short lease per verdict key, in Redis."""

    def __init__(
        self,
        client: Any,
        release_script: Any,
        *,
        stats: JudgeStats,
        lease_s: float = 30.0,
        wait_s: float = 30.0,
        poll_s: float = 0.05,
        timeout_s: float = 0.5,
        leftovers: Leftovers | None = None,
    ) -> None:
        self.client = client
        """The redis-py client (the verdict cache may share it: `VerdictCache.shares`)."""
        self._release = release_script
        self._leftovers = leftovers or Leftovers(timeout_s=timeout_s, interval_s=timeout_s)
        self._stats = stats
        self.lease_s = lease_s
        self.lease_ms = max(1, int(lease_s * 1000))
        """The lease's lifetime for PX."""
        self.wait_s = wait_s
        self.poll_s = poll_s
        self._timeout = timeout_s
        self.token = f"{os.getpid()}:{uuid.uuid4().hex}"
        """What this process writes into the leases it holds."""

    @staticmethod
    def key(lease: str) -> str:
        """The Redis key of lease `lease`."""
        return LEASE_PREFIX + lease

    def failed(self, key: str) -> None:
        """Count a lease operation Redis did not answer (made by a fused cache script), and
        give the lease on `key` back once Redis answers, should Redis take it late."""
        self._stats.add("lease_failures")
        self.give_back_later(key)

    def give_back_later(self, key: str) -> None:
        """Give the lease on `key` back once Redis answers (a lease operation whose answer
        was not read may still take it). It goes by this process's token, so a lease this
        process took again meanwhile goes too: at worst another replica calls as well."""
        self._leftovers.add(
            f"lease {key}",
            lambda: self._release(keys=[LEASE_PREFIX + key], args=[self.token]),
            self.lease_s,
        )

    async def acquire(self, key: str) -> bool | None:
        """Take the lease on `key`: True taken, False held by another, None Redis failed."""
        try:
            async with asyncio.timeout(self._timeout):
                ok = await self.client.set(
                    LEASE_PREFIX + key, self.token, nx=True, px=self.lease_ms
                )
        except asyncio.CancelledError:
            self.give_back_later(key)
            raise
        except Exception:
            self.failed(key)
            return None
        return bool(ok)

    async def release(self, key: str) -> None:
        """Give the lease back (only while it is still ours); if Redis does not answer,
        once it does."""
        try:
            async with asyncio.timeout(self._timeout):
                await self._release(keys=[LEASE_PREFIX + key], args=[self.token])
        except asyncio.CancelledError:
            self.give_back_later(key)
            raise
        except Exception:
            self.failed(key)
