"""Sharing a capacity between callers: weighted fair queueing by deficit round robin.

A shared service must not let one caller's many requests take what another caller
needs: a tenant sending eight heavy batches at once should wait behind itself, not make
a neighbour's small request wait behind all eight. `FairQueue` holds waiting work per
caller (a key: the tenant) and hands it out by deficit round robin: each caller with
work waiting is visited in turn and may take `weight` items per round, so a caller's
share of the capacity is its weight over the weights of the callers waiting, however
many items each has queued. A caller may also hold at most `cap` items at once, which
keeps some of the capacity free for the next caller to arrive even while one caller has
work enough for all of it.

Deficit round robin (Shreedhar and Varghese, 1996) is O(1) per item and needs no clock
or per-item cost estimate, which weighted fair queueing proper does; items here cost 1
each (a scoring job, a judge call), so the two give the same order.

`FairSlots` is a limit of so many at once (a judge backend's concurrency, a provider
account's calls) on top of it: a caller waits only when every slot is taken, and a slot
given back goes to the next caller in turn, not to whoever asked first; the limit may
change while slots are held (`resize`).
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import contextvars
import math
from collections.abc import AsyncIterator, Mapping
from typing import Generic, TypeVar

T = TypeVar("T")

current_caller: contextvars.ContextVar[str] = contextvars.ContextVar("scorewire_caller", default="")
"""Whose share the current call's work takes: its tenant (the token's name), or its
connection when auth is off. The server sets it for each call's task; tasks the call
starts inherit it."""

TENANT = "tenant:"
"""How a caller key that names a tenant begins (`tenant:<name>`); with auth off callers
are connections (`peer:<address>`)."""

UNTENANTED = "background:"
"""The caller key of background work (observed outputs, jobs) with no tenant (auth off):
it takes turns with the connections' keys, uncapped as they are."""

MIN_WEIGHT = 0.01
"""The smallest weight a caller may have (a round then gives it one item in 100)."""


def tenant_key(name: str) -> str:
    """The caller key of the tenant `name` (a token's name)."""
    return f"{TENANT}{name}"


def tenant_weights(by_name: Mapping[str, float]) -> dict[str, float]:
    """Weights by tenant name (`settings.tenant_weights`) as weights by caller key."""
    return {tenant_key(name): w for name, w in by_name.items()}


class _Lane(Generic[T]):
    """One caller's waiting items, what it holds, and its deficit."""

    __slots__ = ("cap", "deficit", "queued", "running", "weight")

    def __init__(self, weight: float, cap: float) -> None:
        self.weight = weight
        self.cap = cap
        self.queued: collections.deque[T] = collections.deque()
        self.running = 0
        self.deficit = 0.0


class FairQueue(Generic[T]):
    """Items waiting per key, taken by weighted round robin; at most `cap` held per key."""

    def __init__(
        self, *, cap: int | None = None, weights: Mapping[str, float] | None = None
    ) -> None:
        """`cap`: most items one key may hold at once (None: no limit); `weights`: a key's
        share relative to others (1 when not named)."""
        self._cap = math.inf if cap is None else max(1, cap)
        self._weights = {k: max(MIN_WEIGHT, float(w)) for k, w in (weights or {}).items()}
        self._lanes: dict[str, _Lane[T]] = {}
        self._ring: collections.deque[str] = collections.deque()
        """Keys with items waiting, in the order they are visited."""
        self._waiting = 0

    def __len__(self) -> int:
        """Items waiting."""
        return self._waiting

    def set_cap(self, cap: int | None) -> None:
        """Change the cap of every capped key (those waiting and holding too)."""
        self._cap = math.inf if cap is None else max(1, cap)
        for lane in self._lanes.values():
            if lane.cap != math.inf:
                lane.cap = self._cap

    def held(self, key: str) -> int:
        """Items `key` holds now (taken and not yet `done`)."""
        lane = self._lanes.get(key)
        return 0 if lane is None else lane.running

    def push(self, key: str, item: T, *, capped: bool = True) -> None:
        """Queue `item` for `key`; `capped=False`: the key may hold any number at once."""
        lane = self._lane(key, capped)
        if not lane.queued:
            self._ring.append(key)
        lane.queued.append(item)
        self._waiting += 1

    def remove(self, key: str, item: T) -> bool:
        """Take a waiting `item` back (its caller went away); whether it was waiting."""
        lane = self._lanes.get(key)
        if lane is None:
            return False
        try:
            lane.queued.remove(item)
        except ValueError:
            return False
        self._waiting -= 1
        if not lane.queued:
            self._ring.remove(key)
            lane.deficit = 0.0
            self._forget(key, lane)
        return True

    def pop(self) -> tuple[str, T] | None:
        """The next item and its key, in weighted round robin among the keys under their
        cap; None when nothing waits or every key with items waiting is at its cap."""
        ring = self._ring
        blocked = 0
        while ring and blocked < len(ring):
            key = ring[0]
            lane = self._lanes[key]
            if lane.running >= lane.cap:
                blocked += 1
                ring.rotate(-1)
                continue
            if lane.deficit < 1.0:
                lane.deficit += lane.weight
                if lane.deficit < 1.0:  # a light key: its turn comes in a later round
                    blocked = 0  # it moved on, so the round is not lost
                    ring.rotate(-1)
                    continue
            blocked = 0
            item = lane.queued.popleft()
            self._waiting -= 1
            lane.deficit -= 1.0
            lane.running += 1
            if not lane.queued:
                ring.popleft()
                lane.deficit = 0.0
            elif lane.deficit < 1.0:
                ring.rotate(-1)
            return key, item
        return None

    def done(self, key: str) -> None:
        """An item `key` held has finished: its cap has room again."""
        lane = self._lanes.get(key)
        if lane is None or lane.running == 0:
            return
        lane.running -= 1
        self._forget(key, lane)

    def _lane(self, key: str, capped: bool) -> _Lane[T]:
        lane = self._lanes.get(key)
        if lane is None:
            cap = self._cap if capped else math.inf
            lane = self._lanes[key] = _Lane(self._weights.get(key, 1.0), cap)
        return lane

    def _forget(self, key: str, lane: _Lane[T]) -> None:
        """Drop an idle key's lane: a server meets many callers over its life."""
        if not lane.queued and lane.running == 0:
            del self._lanes[key]


class FairSlots:
    """`capacity` slots shared between keys: a free slot is taken at once while no one
    waits; else the caller waits in its key's queue, and each slot given back goes to the
    next waiting key by weighted round robin (`FairQueue`), so that a key with many
    waiting waits behind itself, not in front of another key."""

    def __init__(
        self, capacity: int, *, weights: Mapping[str, float] | None = None,
        share: float | None = None,
    ) -> None:  # fmt: skip
        """`weights`: a key's share relative to the others waiting (1 when not named);
        `share`: the most of the slots one key holds at once, as a share of the capacity
        (at least one slot; None: all of them), so that slots held long by one key
        (calls that hang) leave the rest to the others."""
        self.capacity = max(1, capacity)
        """Slots in all."""
        self._free = self.capacity
        self._share = share
        self._waiting: FairQueue[asyncio.Future[None]] = FairQueue(
            weights=weights, cap=self._cap_of(self.capacity)
        )

    def _cap_of(self, capacity: int) -> int | None:
        return None if self._share is None else max(1, int(capacity * self._share))

    @property
    def free(self) -> int:
        """Slots nobody holds now."""
        return self._free

    @property
    def waiting(self) -> int:
        """Callers waiting for a slot."""
        return len(self._waiting)

    def resize(self, capacity: int) -> None:
        """Make it `capacity` slots (at least 1). Slots held past a smaller capacity are
        not taken back: they are not handed out again as they come back."""
        capacity = max(1, capacity)
        self._free += capacity - self.capacity
        self.capacity = capacity
        if self._share is not None:
            self._waiting.set_cap(self._cap_of(capacity))
        self._hand_out()

    @contextlib.asynccontextmanager
    async def slot(self, key: str) -> AsyncIterator[None]:
        """Hold one slot, in `key`'s share, while the block runs."""
        await self._take(key)
        try:
            yield
        finally:
            self._give_back(key)

    async def _take(self, key: str) -> None:
        turn: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiting.push(key, turn)
        self._hand_out()
        if turn.done():
            return
        try:
            await turn
        except asyncio.CancelledError:
            if turn.done() and not turn.cancelled():
                self._give_back(key)  # it was handed a slot as it was cancelled
            else:
                self._waiting.remove(key, turn)
            raise

    def _give_back(self, key: str) -> None:
        self._waiting.done(key)
        self._free += 1
        self._hand_out()

    def _hand_out(self) -> None:
        while self._free > 0 and (taken := self._waiting.pop()) is not None:
            key, turn = taken
            if turn.done():  # cancelled: its caller has not taken it back from the queue yet
                self._waiting.done(key)
                continue
            self._free -= 1
            turn.set_result(None)
