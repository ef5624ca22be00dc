"""The verdict cache: raw judge answers by a hash of everything that shaped them.

The key covers the prompt version, the fully rendered prompt, the backend, the model
and the sampling parameters; the value is the judge's raw answer and its token counts.
Storing the raw answer (not a score) means a changed threshold or pass_level is applied
to the cached answer for free. Only answers that parsed as a verdict are stored: errors
never are.

Stores: in-memory (per process, the default; `MemoryStore`) or Redis (`RedisStore`,
shared by every replica and every run). The cache fails open: a Redis that is down or slow costs
at most `timeout_s` per operation, after which it is left alone for `backoff_s`; every
skipped or failed operation is counted in `JudgeStats.cache_bypasses`, and no score
ever fails because of the cache.

On Redis, a judge call that also takes a single-flight lease (`shared.VerdictLeases`)
on the same Redis makes two round trips instead of four: one script reads the verdict
or, on a miss, takes the lease (`lookup_or_lease`), and one stores the verdict and gives
the lease back (`store_and_release`).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, cast
from urllib.parse import urlsplit

from scorewire.judge.prompts import PROMPT_VERSION, Prompt
from scorewire.judge.redis_url import parse_redis_url, redis_client
from scorewire.judge.stats import JudgeStats

log = logging.getLogger(__name__)

NAMESPACE = "scorewire:verdict:"
"""Prefix of every cache key (so a shared Redis can hold other things too)."""


def verdict_key(
    prompt: Prompt,
    *,
    backend: str,
    model: str,
    temperature: float,
    max_tokens: int,
    sample: int = 0,
) -> str:
    """sha256 over the prompt version, the rendered prompt, backend, model and sampling.

    `sample` (the index of a repeated sample) is part of the material only when it is
    above 0, so sample 0 keeps the key every verdict had before repeated sampling and
    existing caches stay valid.
    """
    sampling: dict[str, Any] = {"temperature": temperature, "max_tokens": max_tokens}
    if sample:
        sampling["sample"] = sample
    material = json.dumps(
        [
            PROMPT_VERSION,
            prompt.kind,
            prompt.system,
            prompt.user,
            prompt.schema_name,
            prompt.schema,
            backend,
            model,
            sampling,
        ],
        ensure_ascii=False,
        sort_keys=True,
        separators=(",", ":"),
    )
    return hashlib.sha256(material.encode()).hexdigest()


@dataclass(frozen=True, slots=True)
class CachedAnswer:
    """A judge's raw answer as stored, and who paid for it."""

    text: str
    input_tokens: int | None
    output_tokens: int | None
    tenant: str | None = None
    """The tenant whose call produced the answer; None when unknown (in-process callers,
    no authentication, or entries written before tenants were recorded)."""

    def dumps(self) -> str:
        """The stored form (version 1; `t` is present only when the tenant is known)."""
        obj: dict[str, Any] = {
            "v": 1,
            "text": self.text,
            "in": self.input_tokens,
            "out": self.output_tokens,
        }
        if self.tenant is not None:
            obj["t"] = self.tenant
        return json.dumps(obj, separators=(",", ":"))

    @staticmethod
    def loads(raw: str) -> CachedAnswer | None:
        """Read the stored form; None for anything unreadable (treated as a miss)."""
        try:
            obj = json.loads(raw)
        except (TypeError, ValueError):
            return None
        if not isinstance(obj, dict) or obj.get("v") != 1 or not isinstance(obj.get("text"), str):
            return None
        in_tok, out_tok, tenant = obj.get("in"), obj.get("out"), obj.get("t")
        return CachedAnswer(
            obj["text"],
            in_tok if isinstance(in_tok, int) else None,
            out_tok if isinstance(out_tok, int) else None,
            tenant if isinstance(tenant, str) else None,
        )


ENTRY_OVERHEAD_BYTES = 240
"""What one entry costs beyond its key's and value's characters: the ordered dict's slot
and link, the tuple, the two string headers and the expiry float (CPython 3.11: 244
bytes measured with tracemalloc over 20,000 verdict-sized entries)."""

DEFAULT_MEMORY_BYTES = 64 * 1024 * 1024

DEFAULT_EVICTIONS_PER_STORE = 64
"""Most entries one store takes off a tenant's books in Redis (see `RedisStore`)."""


class MemoryStore:
    """The in-process store: (value, expiry) by key, each entry held by an owner (the
    tenant whose call paid for it; None when unknown).

    Its size is bounded: `max_bytes` counts each entry's key and value characters plus
    `ENTRY_OVERHEAD_BYTES`. A write that would go past it evicts entries of the owner
    that holds the most bytes, least recently used (read or written) first, until the
    write fits (`evictions` counts them, and `on_evict(n)` hears of them). So one
    tenant that writes many distinct verdicts pushes out its own entries once it is the
    largest holder, not the verdicts other tenants paid for: each owner keeps at least
    its fair share (the bound over the number of owners) of what it uses, and a lone
    owner has the whole bound. A value larger than the whole bound is not stored. An
    expired entry is dropped when it is read, and all of them once the store has grown
    to twice its size after the last sweep. (aiocache's memory cache kept one event-loop
    timer per entry, so every verdict cached for the default 30 days lay in the loop's
    timer heap for as long, and its reads and writes went through its wait_for, plugin
    and serializer layers: about 10 % of the CPU per judge call.) Reads and writes never
    wait, so the cache does not bound them with a timeout either.
    """

    def __init__(
        self,
        clock: Callable[[], float] = time.monotonic,
        *,
        max_bytes: int = DEFAULT_MEMORY_BYTES,
        on_evict: Callable[[int], None] | None = None,
    ) -> None:
        self._cache: dict[str, tuple[str, float | None, str | None]] = {}
        """(value, expiry, owner) by key."""
        self._order: dict[str | None, OrderedDict[str, None]] = {}
        """Each owner's keys, least recently used first."""
        self._held: dict[str | None, int] = {}
        """The bytes each owner holds (owners holding none are not listed)."""
        self._clock = clock
        self._sweep_at = 1024
        self.max_bytes = max_bytes
        self.bytes = 0
        """The entries' size as `max_bytes` counts it."""
        self.evictions = 0
        self._on_evict = on_evict

    @staticmethod
    def _size(key: str, value: str) -> int:
        return len(key) + len(value) + ENTRY_OVERHEAD_BYTES

    def held(self, owner: str | None) -> int:
        """The bytes `owner`'s entries take, as `max_bytes` counts them."""
        return self._held.get(owner, 0)

    def __len__(self) -> int:
        return len(self._cache)

    def _drop(self, key: str) -> None:
        value, _, owner = self._cache.pop(key)
        size = self._size(key, value)
        self.bytes -= size
        order = self._order[owner]
        del order[key]
        if order:
            self._held[owner] -= size
        else:
            del self._order[owner], self._held[owner]

    async def get(self, key: str) -> str | None:
        """The value stored under `key`, or None (missing or expired)."""
        entry = self._cache.get(key)
        if entry is None:
            return None
        value, expires, owner = entry
        if expires is not None and self._clock() >= expires:
            self._drop(key)
            return None
        self._order[owner].move_to_end(key)
        return value

    async def set(
        self, key: str, value: str, ttl: float | None = None, *, owner: str | None = None
    ) -> None:
        """Store `value` under `key` for `ttl` seconds (None or 0: until evicted), held by
        `owner` (a rewrite by another owner passes the entry to it)."""
        size = self._size(key, value)
        if key in self._cache:
            self._drop(key)
        if size > self.max_bytes:
            return
        evicted = 0
        while self.bytes + size > self.max_bytes:
            largest = max(self._held, key=self._held.__getitem__)
            if self._held.get(owner, 0) >= self._held[largest]:
                largest = owner  # a tie: the writer gives up its own first
            self._drop(next(iter(self._order[largest])))
            evicted += 1
        if evicted:
            self.evictions += evicted
            if self._on_evict is not None:
                self._on_evict(evicted)
        self._cache[key] = (value, self._clock() + ttl if ttl else None, owner)
        self._order.setdefault(owner, OrderedDict())[key] = None
        self._held[owner] = self._held.get(owner, 0) + size
        self.bytes += size
        if len(self._cache) >= self._sweep_at:
            now = self._clock()
            for k in [k for k, (_, e, _) in self._cache.items() if e is not None and now >= e]:
                self._drop(k)
            self._sweep_at = max(1024, 2 * len(self._cache))

    async def close(self) -> None:
        """Nothing to close (the entries live as long as the process)."""


# Per-tenant accounting (`RedisStore` with `tenant_max_bytes`). Each tenant that stores
# verdicts has, under `<namespace>tenant:<name>`, a sorted set `:lru` (verdict key ->
# last use, ms), a hash `:sizes` (verdict key -> characters of key and value) and a
# counter `:bytes` (their sum). Storing past the tenant's bound deletes its least
# recently used verdicts until it is within the bound again, taking at most
# `evictions_per_store` of them off the books per store: a script holds Redis for every
# caller while it runs, so one store never walks a tenant's whole history (after the bound
# was lowered, say); the rest go at the tenant's next stores, each of which adds one entry
# and takes off up to that many. A verdict another tenant has rewritten since (its `t`
# names that tenant) is left alone, only dropped from this tenant's books. Entries that
# expired on their own are still counted until they come up as the oldest. The three
# keys expire with the verdicts (their TTL is refreshed on every store).
_TOUCH_LUA = """
local function touch(key, value, base, now)
  if base == '' or not value then return end
  local ok, obj = pcall(cjson.decode, value)
  if ok and type(obj) == 'table' and type(obj['t']) == 'string' then
    redis.call('ZADD', base .. obj['t'] .. ':lru', 'XX', now, key)
  end
end
"""

_ACCOUNT_LUA = """
local function store(key, value, ttl)
  if ttl == '0' then
    redis.call('SET', key, value)
  else
    redis.call('SET', key, value, 'PX', ttl)
  end
end

local function account(key, size, base, tenant, quota, now, ttl, most)
  if base == '' or tenant == '' then return 0 end
  local prefix = base .. tenant
  local lru, sizes, total = prefix .. ':lru', prefix .. ':sizes', prefix .. ':bytes'
  local old = tonumber(redis.call('HGET', sizes, key) or '0')
  redis.call('HSET', sizes, key, size)
  redis.call('ZADD', lru, now, key)
  local bytes = redis.call('INCRBY', total, size - old)
  local evicted, taken = 0, 0
  while bytes > quota and taken < most do
    local oldest = redis.call('ZRANGE', lru, 0, 0)[1]
    if not oldest then break end
    local s = tonumber(redis.call('HGET', sizes, oldest) or '0')
    redis.call('ZREM', lru, oldest)
    redis.call('HDEL', sizes, oldest)
    local v = redis.call('GET', oldest)
    if v then
      local ok, obj = pcall(cjson.decode, v)
      if ok and type(obj) == 'table' and obj['t'] == tenant then
        redis.call('DEL', oldest)
        evicted = evicted + 1
      end
    end
    bytes = redis.call('DECRBY', total, s)
    taken = taken + 1
  end
  if ttl ~= '0' then
    redis.call('PEXPIRE', lru, ttl)
    redis.call('PEXPIRE', sizes, ttl)
    redis.call('PEXPIRE', total, ttl)
  end
  return evicted
end
"""

# KEYS: verdict, lease. ARGV: lease token, lease ms, tenant base ('' when no tenant is
# bounded), now ms. Returns {verdict or false, taken}: the verdict when there is one (no
# lease is taken; its tenant's use of it is recorded), else whether the lease was taken.
LOOKUP_OR_LEASE_LUA = (
    _TOUCH_LUA
    + """
local v = redis.call('GET', KEYS[1])
if v then
  touch(KEYS[1], v, ARGV[3], ARGV[4])
  return {v, 0}
end
if redis.call('SET', KEYS[2], ARGV[1], 'NX', 'PX', ARGV[2]) then return {false, 1} end
return {false, 0}
"""
)

# KEYS: verdict. ARGV: tenant base ('' when no tenant is bounded), now ms. The verdict,
# its tenant's use of it recorded.
GET_LUA = (
    _TOUCH_LUA
    + """
local v = redis.call('GET', KEYS[1])
touch(KEYS[1], v, ARGV[1], ARGV[2])
return v
"""
)

# KEYS: verdict. ARGV: verdict, ttl ms (0: none), tenant base, tenant, bound, now ms,
# size, most entries to take off the books. Returns how many of the tenant's verdicts
# went to keep it within its bound.
STORE_LUA = (
    _ACCOUNT_LUA
    + """
store(KEYS[1], ARGV[1], ARGV[2])
return account(
  KEYS[1], tonumber(ARGV[7]), ARGV[3], ARGV[4], tonumber(ARGV[5]), ARGV[6], ARGV[2],
  tonumber(ARGV[8]))
"""
)

# KEYS: verdict, lease. ARGV: verdict, ttl ms (0: none), lease token, then STORE_LUA's
# tenant arguments (base, tenant, bound, now ms, size, most). The lease is deleted only while
# it is still ours (as `shared.RELEASE_LUA`). Returns what STORE_LUA returns.
STORE_AND_RELEASE_LUA = (
    _ACCOUNT_LUA
    + """
store(KEYS[1], ARGV[1], ARGV[2])
if redis.call('GET', KEYS[2]) == ARGV[3] then redis.call('DEL', KEYS[2]) end
return account(
  KEYS[1], tonumber(ARGV[8]), ARGV[4], ARGV[5], tonumber(ARGV[6]), ARGV[7], ARGV[2],
  tonumber(ARGV[9]))
"""
)


class RedisStore:
    """The shared store: a redis-py asyncio client (`redis_url.redis_client`), which the
    single-flight leases may share (then `lookup_or_lease`/`store_and_release` work).

    With `tenant_max_bytes`, each tenant's verdicts (by the tenant that paid for them)
    are held to that many characters of keys and answers, its least recently used going
    first (see `_ACCOUNT_LUA`): a tenant flooding the cache with distinct calls evicts
    its own verdicts, not the ones other tenants paid for. Without it, Redis's own
    `maxmemory-policy` decides what goes, across tenants. Verdicts stored without a
    tenant (no authentication) are not counted. One store takes at most
    `evictions_per_store` entries off a tenant's books (the rest go at its next stores),
    so no store's script holds Redis for long.
    """

    def __init__(
        self,
        client: Any,
        *,
        owned: bool = True,
        tenant_max_bytes: int | None = None,
        evictions_per_store: int = DEFAULT_EVICTIONS_PER_STORE,
        namespace: str = NAMESPACE,
    ) -> None:
        self.client = client
        """The redis-py client (decoding responses as text)."""
        self._owned = owned
        self.tenant_max_bytes = tenant_max_bytes
        """The per-tenant bound, or None."""
        self.evictions_per_store = evictions_per_store
        """Most entries one store takes off a tenant's books."""
        self.tenant_base = "" if tenant_max_bytes is None else f"{namespace}tenant:"
        """Prefix of each tenant's accounting keys ('' when tenants are not bounded)."""
        self.lookup_or_lease = client.register_script(LOOKUP_OR_LEASE_LUA)
        self.store_and_release = client.register_script(STORE_AND_RELEASE_LUA)
        self._get = client.register_script(GET_LUA)
        self._store = client.register_script(STORE_LUA)
        self._loaded = False

    async def load_scripts(self) -> None:
        """Load the scripts once per process, outside any one operation's timeout (the
        client's socket timeouts bound it): else the first fused operation makes three
        round trips (NOSCRIPT, SCRIPT LOAD, EVALSHA) within the cache's short timeout.
        A Redis restarted since reloads them on NOSCRIPT by itself (redis-py)."""
        if not self._loaded:
            for script in (self.lookup_or_lease, self.store_and_release, self._get, self._store):
                script.sha = await self.client.script_load(script.script)
            self._loaded = True

    def tenant_args(self, key: str, value: str, owner: str | None) -> list[Any]:
        """STORE_LUA's tenant arguments: base, tenant, bound, now (ms), size, most."""
        if self.tenant_max_bytes is None or owner is None:
            return ["", "", 0, 0, 0, 0]
        now = int(time.time() * 1000)
        size = len(key) + len(value)
        return [self.tenant_base, owner, self.tenant_max_bytes, now, size, self.evictions_per_store]

    def touch_args(self) -> list[Any]:
        """The tenant arguments of a lookup: base ('' when not bounded) and now (ms)."""
        if self.tenant_max_bytes is None:
            return ["", 0]
        return [self.tenant_base, int(time.time() * 1000)]

    async def get(self, key: str) -> str | None:
        """The value stored under `key`, or None (its tenant's use of it recorded)."""
        if self.tenant_max_bytes is None:
            value = await self.client.get(key)
        else:
            await self.load_scripts()
            value = await self._get(keys=[key], args=self.touch_args())
        return None if value is None else str(value)

    async def set(
        self, key: str, value: str, ttl: float | None = None, owner: str | None = None
    ) -> int:
        """Store `value` under `key` for `ttl` seconds (None or 0: until evicted), held
        against `owner`'s bound; how many of the owner's verdicts went for it."""
        if self.tenant_max_bytes is None or owner is None:
            if ttl:
                await self.client.set(key, value, px=ttl_ms(ttl))
            else:
                await self.client.set(key, value)
            return 0
        await self.load_scripts()
        evicted = await self._store(
            keys=[key], args=[value, ttl_ms(ttl), *self.tenant_args(key, value, owner)]
        )
        return int(evicted or 0)

    async def close(self) -> None:
        """Close the client's connections (unless it was lent: its owner closes it)."""
        if self._owned:
            await self.client.aclose()


def ttl_ms(ttl_s: float | None) -> int:
    """A TTL in whole milliseconds for PX (0: none)."""
    return max(1, round(ttl_s * 1000)) if ttl_s else 0


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

    async def get(self, key: str) -> CachedAnswer | None:
        """The stored answer, or None on a miss or when the store is unavailable."""
        if not self._available():
            self._stats.add("cache_bypasses")
            return None
        ok, found = await self._read(key)
        if ok:
            self._stats.add("cache_hits" if found is not None else "cache_misses")
        return found

    async def peek(self, key: str) -> CachedAnswer | None:
        """Like `get`, but counts no hit or miss: a look before a `get` that will count, or
        one poll of several (single flight across replicas)."""
        if not self._available():
            return None
        return (await self._read(key))[1]

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
