"""Verdicts already paid for: what a flight looks for before it calls, and what it leaves.

Before a call, a flight looks its verdict up in the cache, as its caller may see it (a
verdict another tenant paid for is answered as a fresh call: `Billing.foreign_hit`);
across replicas it takes the verdict key's lease, or waits for the verdict the replica
holding the lease is fetching (`shared.VerdictLeases`). After the call, the flight stores
its verdict and gives the lease back (`flights.Flights` does so once the waiting checks
have the verdict). When the cache and the leases are on one Redis client, the lookup and
the lease go in one round trip, and so do the store and the lease's release.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import time
from typing import Any

from scorewire.core.secrets import scrub
from scorewire.judge.answers import Question
from scorewire.judge.billing import Billing
from scorewire.judge.cache import VerdictCache
from scorewire.judge.cache_entry import CachedAnswer
from scorewire.judge.flights import Flight, Outcome
from scorewire.judge.shared import VerdictLeases
from scorewire.judge.stats import JudgeStats
from scorewire.judge.verdict import VerdictError

# The judge service's log lines keep the name they had before it was split.
log = logging.getLogger("scorewire.judge.service")


class VerdictSharing:
    """The verdict cache and the single-flight leases, as one flight uses them."""

    def __init__(
        self,
        cache: VerdictCache,
        leases: VerdictLeases | None,
        billing: Billing,
        stats: JudgeStats,
        *,
        tenants_trust_each_other: bool,
    ) -> None:
        self.cache = cache
        self._leases = leases
        # The cache and the leases on one Redis client: two round trips per call, not four.
        self._fused = leases is not None and cache.shares(leases.client)
        self._billing = billing
        self.stats = stats
        self.tenants_trust_each_other = tenants_trust_each_other
        """Whether a cache hit on another tenant's verdict may be reported as `cached`."""
        self.use_cache = True
        """Whether verdicts are read from and written to the cache."""
        self.share_calls = True
        """Whether identical questions in flight share one call."""

    async def find(self, flight: Flight, model: str, question: Question[Any]) -> Outcome | None:
        """The verdict of `flight`'s question without a call of its own, or None: the
        flight then calls (with the verdict key's lease, if it took it)."""
        key = flight.key
        state = "skipped"
        # A flight that asks the judges again reads the cache apart from the lease: an
        # entry the fused script would hand back may be older than it wants.
        fused = self._fused and flight.fresh_since is None
        if fused and self.use_cache and self.share_calls:
            state, found = await self._lookup_or_lease(flight, key, model, question)
        else:
            found = await self._from_cache(flight, key, model, question)
        if found is not None:
            return found
        if state == "skipped" and self._leases is not None and self.share_calls:
            flight.lease, found = await self._lease_or_verdict(flight, key, model, question)
        return found

    async def store(self, flight: Flight) -> None:
        """Store `flight`'s verdict (with its lease's release, when fused).

        A flight that asked the judges again replaces the entry its key holds, unless
        another tenant paid for that one and tenants do not trust each other: a tenant's
        fresh call must not make another's next hit on its own verdict a foreign one (paid
        again, `Billing.foreign_hit`), so that tenant's entry stays."""
        entry, flight.store = flight.store, None
        assert entry is not None
        if not self.use_cache:
            return
        if flight.fresh_since is not None and not self.tenants_trust_each_other:
            held = await self.cache.peek(flight.key)
            if held is not None and held.tenant != flight.tenant:
                return
        lease, leases = flight.lease, self._leases
        if self._fused and lease is not None and leases is not None:
            if await self.cache.store_and_release(
                flight.key, entry, leases.key(lease), leases.token
            ):
                flight.lease = None  # given back with the store
        else:
            await self.cache.set(flight.key, entry)

    async def give_back_lease(self, flight: Flight) -> None:
        """Release the lease `flight` still holds, if any."""
        if flight.lease is not None and self._leases is not None:
            lease, flight.lease = flight.lease, None
            await self._leases.release(lease)

    def _lease_id(self, flight: Flight, key: str) -> str:
        material = key if self.tenants_trust_each_other else f"{key}\0{flight.tenant or ''}"
        return hashlib.sha256(material.encode()).hexdigest()

    async def _lookup_or_lease(
        self, flight: Flight, key: str, model: str, question: Question[Any]
    ) -> tuple[str, Outcome | None]:
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
            state, hit = await self.cache.lookup_or_lease(
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
        flight: Flight,
        key: str,
        model: str,
        question: Question[Any],
        *,
        count: bool = True,
    ) -> Outcome | None:
        """The cached verdict as this caller may see it, or None on a miss (or no cache,
        or an entry older than `flight.fresh_since`).

        `count=False` (the polls of a lease wait) reads without counting a hit or miss:
        one ask is one miss, however often it polls."""
        if not self.use_cache:
            return None
        since = flight.fresh_since
        read = self.cache.get if count else self.cache.peek
        hit = await read(key, since=since)
        if hit is None:
            return None
        return await self._hit(flight, model, question, hit)

    async def _hit(
        self, flight: Flight, model: str, question: Question[Any], hit: CachedAnswer
    ) -> Outcome | None:
        """A cache entry as this caller may see it, or None when it does not parse."""
        try:
            value = question.parse(scrub(hit.text))  # entries written before scrubbing
        except VerdictError:
            log.warning("verdict cache: unreadable entry ignored")
            return None
        saved = self._billing.cost(model, hit.input_tokens, hit.output_tokens)
        if self.tenants_trust_each_other or hit.tenant == flight.tenant:
            if saved is not None:
                self.stats.add("saved_usd", saved)
            return Outcome(value, from_cache=True, model=hit.model, answered_at=hit.at or 0.0)
        return await self._billing.foreign_hit(flight, model, question, value, hit)

    async def _lease_or_verdict(
        self,
        flight: Flight,
        key: str,
        model: str,
        question: Question[Any],
        *,
        held: bool = False,
    ) -> tuple[str | None, Outcome | None]:
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
