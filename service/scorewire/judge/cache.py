"""The verdict cache: raw judge answers by a hash of everything that shaped them.

What an entry is (its key, and the judge's raw answer as stored) is `cache_entry`.
Stores: in-memory (per process, the default; `memory_store.MemoryStore`) or Redis
(`redis_store.RedisStore`, shared by every replica and every run). The cache fails open:
a Redis that is down or slow costs at most `timeout_s` per operation, after which it is
left alone for `backoff_s`; every skipped or failed operation is counted in
`JudgeStats.cache_bypasses`, and no score ever fails because of the cache.

On Redis, a judge call that also takes a single-flight lease (`shared.VerdictLeases`)
on the same Redis makes two round trips instead of four: one script reads the verdict
or, on a miss, takes the lease (`lookup_or_lease`), and one stores the verdict and gives
the lease back (`store_and_release`).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from typing import Any, cast
from urllib.parse import urlsplit

from scorewire.judge.cache_entry import NAMESPACE, CachedAnswer
from scorewire.judge.memory_store import DEFAULT_MEMORY_BYTES, MemoryStore
from scorewire.judge.redis_store import DEFAULT_EVICTIONS_PER_STORE, RedisStore, ttl_ms
from scorewire.judge.redis_url import parse_redis_url, redis_client
from scorewire.judge.stats import JudgeStats

log = logging.getLogger(__name__)


class VerdictCache:
    """Get/set raw answers with short timeouts; failures are counted, never raised."""

    def __init__(
        self,
        store: MemoryStore | RedisStore,
        *,
        stats: JudgeStats,
        ttl_s: float | None = None,
        timeout_s: float = 0.25,
        backoff_s: float = 2.0,
        description: str = "memory",
        clock: Callable[[], float] = time.monotonic,
        namespace: str = NAMESPACE,
    ) -> None:
        self._store = store
        self._namespace = namespace
        self._stats = stats
        self._ttl = float(ttl_s) if ttl_s else None
        self._timeout = timeout_s
        self._backoff = backoff_s
        self._down_until = 0.0
        self._clock = clock
        self.description = description
        """`memory` or the Redis address without credentials (for logs)."""

    async def unreachable(self, timeout_s: float = 2.0) -> str | None:
        """Why the cache's Redis does not answer a PING within `timeout_s` (None: it does,
        or the cache is in memory). For the start-up warning: the cache itself never
        raises, so a wrong URL would otherwise go unnoticed."""
        if not isinstance(self._store, RedisStore):
            return None
        try:
            await asyncio.wait_for(self._store.client.ping(), timeout_s)
        except Exception as err:  # any failure to answer is the answer
            return f"{type(err).__name__}: {err}" if str(err) else type(err).__name__
        return None

    @classmethod
    def from_url(
        cls,
        url: str,
        *,
        stats: JudgeStats,
        ttl_s: float | None = None,
        timeout_s: float = 0.25,
        backoff_s: float = 2.0,
        pool_size: int = 64,
        namespace: str = NAMESPACE,
        tls_ca: str | None = None,
        redis: Any = None,
        memory_bytes: int = DEFAULT_MEMORY_BYTES,
        tenant_max_bytes: int | None = None,
        evictions_per_store: int = DEFAULT_EVICTIONS_PER_STORE,
    ) -> VerdictCache:
        """A cache for `memory://` or a Redis URL (`scorewire.judge.redis_url`).

        `namespace` prefixes every key (the generation cache shares the Redis with its own).
        `redis`: the redis-py client to use for a Redis URL (one made for `url` and shared
        with the single-flight leases; its lender closes it), else one is made here.
        `memory_bytes` bounds a `memory://` store (`MemoryStore`); `tenant_max_bytes`
        bounds each tenant's share of a Redis one (`RedisStore`), at most
        `evictions_per_store` entries leaving a tenant's books per store.
        """
        if urlsplit(url.strip() or "memory://").scheme.lower() == "memory":
            return cls(
                MemoryStore(
                    max_bytes=memory_bytes, on_evict=lambda n: stats.add("cache_evictions", n)
                ),
                stats=stats,
                ttl_s=ttl_s,
                timeout_s=timeout_s,
                description="memory",
                namespace=namespace,
            )
        try:
            target = parse_redis_url(url, "the cache URL")
        except ValueError as err:
            if "must start with" in str(err):
                raise ValueError("the cache URL must start with memory:// or redis://") from None
            raise
        owned = redis is None
        if redis is None:
            redis = redis_client(target, tls_ca=tls_ca, timeout_s=timeout_s, pool_size=pool_size)
        return cls(
            RedisStore(
                redis,
                owned=owned,
                tenant_max_bytes=tenant_max_bytes,
                evictions_per_store=evictions_per_store,
                namespace=namespace,
            ),
            stats=stats,
            ttl_s=ttl_s,
            timeout_s=timeout_s,
            backoff_s=backoff_s,
            description=target.describe(),
            namespace=namespace,
        )

    def _available(self) -> bool:
        return self._clock() >= self._down_until

    def _failed(self, op: str, err: BaseException) -> None:
        self._stats.add("cache_bypasses")
        if self._available():
            log.warning(
                "verdict cache %s: %s failed (%s); bypassing it for %.1f s",
                self.description,
                op,
                type(err).__name__,
                self._backoff,
            )
        self._down_until = self._clock() + self._backoff

    async def get(self, key: str, *, since: float | None = None) -> CachedAnswer | None:
        """The stored answer, or None on a miss or when the store is unavailable.

        `since` (seconds since the epoch): an answer the judge gave before then is not
        returned, and counted as a refresh rather than a hit (the caller asked the
        judges again)."""
        if not self._available():
            self._stats.add("cache_bypasses")
            return None
        ok, found = await self._read(key)
        if ok:
            if found is not None and since is not None and not found.answered_since(since):
                self._stats.add("cache_refreshes")
                return None
            self._stats.add("cache_hits" if found is not None else "cache_misses")
        return found

    async def peek(self, key: str, *, since: float | None = None) -> CachedAnswer | None:
        """Like `get`, but counts no hit or miss: a look before a `get` that will count, or
        one poll of several (single flight across replicas)."""
        if not self._available():
            return None
        found = (await self._read(key))[1]
        if found is not None and since is not None and not found.answered_since(since):
            return None
        return found

    async def _read(self, key: str) -> tuple[bool, CachedAnswer | None]:
        """(whether the store answered, the stored answer or None)."""
        store = self._store
        try:
            if isinstance(store, RedisStore):
                await store.load_scripts()  # once, outside the operation's timeout
                async with asyncio.timeout(self._timeout):
                    raw = await store.get(self._namespace + key)
            else:  # in process: never waits, so no timeout (an event-loop timer) per read
                raw = await store.get(self._namespace + key)
        except asyncio.CancelledError:
            raise
        except Exception as err:
            self._failed("get", err)
            return False, None
        return True, CachedAnswer.loads(raw) if raw is not None else None

    @property
    def store(self) -> MemoryStore | RedisStore:
        """Where the entries live: a `MemoryStore` or a `RedisStore`."""
        return self._store

    def shares(self, client: Any) -> bool:
        """Whether the store is Redis through `client` (so the fused operations apply)."""
        return isinstance(self._store, RedisStore) and self._store.client is client

    async def lookup_or_lease(
        self, key: str, lease_key: str, token: str, lease_ms: int
    ) -> tuple[str, CachedAnswer | None]:
        """`get`, and on a miss take the lease on `lease_key`, in one round trip (a store
        that `shares` the leases' client). Counts hits, misses and bypasses as `get`.

        Returns (`hit`, the answer), or (state, None) with state `taken` (the lease is
        ours), `held` (another caller holds it), `failed` (Redis did not answer: counted,
        no lease) or `skipped` (nothing asked about the lease: the cache is bypassed, or
        the entry was unreadable; the caller takes the lease the usual way).
        """
        if not self._available():
            self._stats.add("cache_bypasses")
            return "skipped", None
        store = cast(RedisStore, self._store)
        try:
            await store.load_scripts()
            async with asyncio.timeout(self._timeout):
                raw, taken = await store.lookup_or_lease(
                    keys=[self._namespace + key, lease_key],
                    args=[token, lease_ms, *store.touch_args()],
                )
        except asyncio.CancelledError:
            raise
        except Exception as err:
            self._failed("get", err)
            return "failed", None
        found = CachedAnswer.loads(raw) if raw is not None else None
        self._stats.add("cache_hits" if found is not None else "cache_misses")
        if found is not None:
            return "hit", found
        if raw is not None:
            return "skipped", None  # an unreadable entry: a miss, and no lease was asked
        return ("taken" if taken else "held"), None

    async def store_and_release(
        self, key: str, answer: CachedAnswer, lease_key: str, token: str
    ) -> bool:
        """`set`, and give back the lease on `lease_key` while it is `token`'s, in one
        round trip (a store that `shares` the leases' client). False when nothing was
        done (the cache is bypassed or Redis failed, counted as `set` counts): the caller
        then releases the lease itself."""
        if not self._available():
            self._stats.add("cache_bypasses")
            return False
        store = cast(RedisStore, self._store)
        try:
            await store.load_scripts()
            full, value = self._namespace + key, answer.dumps()
            async with asyncio.timeout(self._timeout):
                evicted = await store.store_and_release(
                    keys=[full, lease_key],
                    args=[
                        value,
                        ttl_ms(self._ttl),
                        token,
                        *store.tenant_args(full, value, answer.tenant),
                    ],
                )
        except asyncio.CancelledError:
            raise
        except Exception as err:
            self._failed("set", err)
            return False
        if evicted:
            self._stats.add("cache_evictions", int(evicted))
        return True

    async def set(self, key: str, answer: CachedAnswer) -> None:
        """Store an answer; a failure is counted and otherwise ignored."""
        if not self._available():
            self._stats.add("cache_bypasses")
            return
        store, full, value = self._store, self._namespace + key, answer.dumps()
        try:
            if isinstance(store, RedisStore):  # held against the payer's bound, if any
                await store.load_scripts()  # once, outside the operation's timeout
                async with asyncio.timeout(self._timeout):
                    evicted = await store.set(full, value, self._ttl, answer.tenant)
                if evicted:
                    self._stats.add("cache_evictions", evicted)
            else:  # the in-process store shares its bound out by the paying tenant
                await store.set(full, value, ttl=self._ttl, owner=answer.tenant)
        except asyncio.CancelledError:
            raise
        except Exception as err:
            self._failed("set", err)

    async def aclose(self) -> None:
        """Close connections to the store."""
        try:
            await self._store.close()
        except Exception:
            log.debug("verdict cache close failed", exc_info=True)
