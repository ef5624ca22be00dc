"""The verdict cache's shared store on Redis (`RedisStore`): each tenant's verdicts held
to a bound by scripts that run in Redis, and the scripts that join a lookup or a store
with a single-flight lease (`shared.VerdictLeases`) in one round trip."""

from __future__ import annotations

import time
from typing import Any

from scorewire.judge.cache_entry import NAMESPACE

DEFAULT_EVICTIONS_PER_STORE = 64
"""Most entries one store takes off a tenant's books in Redis (see `RedisStore`)."""

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
