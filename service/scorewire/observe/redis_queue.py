"""The observation queue on Redis Streams, shared by every replica through a consumer group.

Each observation is one stream entry; its id is also a key (`…:id:<id>`) that says it was
queued (`q`) or processed (`d`) and expires the dedupe window after it was queued, and
again after it was scored. One
script checks room, refuses duplicate ids and appends the batch, atomically (Redis runs
it alone); with Redis's AOF on `everysec` (the usual setting) an acknowledged write
survives a Redis restart but for the last second, with `always` entirely.

Consumers read with XREADGROUP; an entry a dead consumer held longer than the lease is
claimed by another (XAUTOCLAIM). `done` marks the ids processed, acknowledges and deletes
the entries in one script, so the stream's length is the queue's depth; each tenant's
depth is a counter in a hash, kept by the same scripts.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import Any

from scorewire.observe.queue import (
    DEDUPE_WINDOW_S,
    DEFAULT_LEASE_S,
    Delivery,
    QueueFull,
    QueueUnavailable,
    tenant_full,
)

PREFIX = "scorewire:observe"
GROUP = "scorewire-observe"

# KEYS[1] the stream, KEYS[2] the tenants' depths (a hash). ARGV: max depth, id TTL (s),
# id key prefix, max per tenant (-1: none), then id, payload, tenant triples.
# Returns {-1, depth} when the new ones do not fit the queue, {-2, tenant, its depth} when
# they do not fit a tenant's share, else one 1 (queued) or 0 (a duplicate) per id.
_PUT = """
local depth = redis.call('XLEN', KEYS[1])
local fresh, seen, per = 0, {}, {}
for i = 5, #ARGV, 3 do
  local id = ARGV[i]
  if not seen[id] and redis.call('EXISTS', ARGV[3] .. id) == 0 then
    fresh = fresh + 1
    per[ARGV[i + 2]] = (per[ARGV[i + 2]] or 0) + 1
  end
  seen[id] = true
end
if depth + fresh > tonumber(ARGV[1]) then return {-1, depth} end
local cap = tonumber(ARGV[4])
if cap >= 0 then
  for t, n in pairs(per) do
    local held = tonumber(redis.call('HGET', KEYS[2], t) or '0')
    if held + n > cap then return {-2, t, held} end
  end
end
local out = {}
for i = 5, #ARGV, 3 do
  local id = ARGV[i]
  if redis.call('SET', ARGV[3] .. id, 'q', 'NX', 'EX', ARGV[2]) then
    redis.call('XADD', KEYS[1], '*', 'id', id, 'p', ARGV[i + 1], 't', ARGV[i + 2])
    redis.call('HINCRBY', KEYS[2], ARGV[i + 2], 1)
    out[#out + 1] = 1
  else
    out[#out + 1] = 0
  end
end
return out
"""

# KEYS[1] the stream, KEYS[2] the tenants' depths. ARGV: id TTL (s), id key prefix, the
# group, then id, entry id, tenant triples. Marks each id processed, acknowledges and
# deletes its entry; a tenant's depth falls only for an entry this call deleted, so an
# entry done twice (claimed by two consumers) is not counted off twice.
_DONE = """
for i = 4, #ARGV, 3 do
  redis.call('SET', ARGV[2] .. ARGV[i], 'd', 'EX', ARGV[1])
  redis.call('XACK', KEYS[1], ARGV[3], ARGV[i + 1])
  if redis.call('XDEL', KEYS[1], ARGV[i + 1]) == 1 then
    if redis.call('HINCRBY', KEYS[2], ARGV[i + 2], -1) <= 0 then
      redis.call('HDEL', KEYS[2], ARGV[i + 2])
    end
  end
end
return 1
"""

# KEYS[1] the rules hash. ARGV: name, body. Replaces a stored rule only; 1 if it did.
_REPLACE = """
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 0 then return 0 end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
return 1
"""


class RedisQueue:
    """Observations in a Redis stream read by one consumer group (see the module)."""

    def __init__(
        self,
        client: Any,
        description: str,
        *,
        max_depth: int,
        max_per_tenant: int | None = None,
        lease_s: float = DEFAULT_LEASE_S,
        dedupe_s: float = DEDUPE_WINDOW_S,
    ) -> None:
        self._per_tenant = max_per_tenant
        self._dedupe_s = max(1, int(dedupe_s))
        self._redis = client
        self.description = description
        self._max = max_depth
        self._lease_ms = int(lease_s * 1000)
        self._stream = f"{PREFIX}:stream"
        self._ids = f"{PREFIX}:id:"
        self._tenants = f"{PREFIX}:tenants"
        self._consumer = "c_" + uuid.uuid4().hex[:16]
        self._put = client.register_script(_PUT)
        self._done = client.register_script(_DONE)
        self._replace = client.register_script(_REPLACE)
        self._rules = f"{PREFIX}:rules"
        self._ready = False

    async def start(self) -> None:
        """Create the stream and its consumer group unless they exist."""
        try:
            await self._call(self._redis.xgroup_create(self._stream, GROUP, id="0", mkstream=True))
        except QueueUnavailable as err:
            if "BUSYGROUP" not in str(err.__cause__):
                raise
        self._ready = True

    async def _call(self, awaitable: Any) -> Any:
        from redis.exceptions import RedisError

        try:
            return await awaitable
        except RedisError as err:
            if "NOGROUP" in str(err):  # Redis lost the group (restarted without persistence)
                self._ready = False
            raise QueueUnavailable(
                f"the observation queue {self.description} does not answer ({type(err).__name__})"
            ) from err

    async def put(
        self, items: Sequence[tuple[str, bytes]], tenants: Sequence[str] = ()
    ) -> list[bool]:
        """Queue the batch in one script (see `ObservationQueue.put`)."""
        if not self._ready:  # Redis did not answer at start-up
            await self.start()
        cap = -1 if self._per_tenant is None else self._per_tenant
        args: list[Any] = [self._max, self._dedupe_s, self._ids, cap]
        for (i, p), t in zip(items, tenants or [""] * len(items), strict=True):
            args.extend((i, p, t))
        got = await self._call(self._put(keys=[self._stream, self._tenants], args=args))
        if got and int(got[0]) == -1:
            raise QueueFull(
                f"the observation queue holds {got[1]} of at most {self._max} "
                "(SCOREWIRE_OBSERVE_QUEUE_MAX): the batch does not fit"
            )
        if got and int(got[0]) == -2:
            tenant = got[1].decode() if isinstance(got[1], bytes) else str(got[1])
            raise QueueFull(tenant_full(tenant, int(got[2]), cap, len(items)))
        return [bool(x) for x in got]

    async def take(self, limit: int) -> list[Delivery]:
        """Entries whose consumer died first (XAUTOCLAIM), then new ones (XREADGROUP)."""
        if not self._ready:  # Redis did not answer at start-up
            await self.start()
        out: list[Delivery] = []
        claimed = await self._call(
            self._redis.xautoclaim(
                self._stream, GROUP, self._consumer, self._lease_ms, "0-0", count=limit
            )
        )
        out.extend(_delivery(e, 2) for e in claimed[1] if e[1])
        if len(out) < limit:
            read = await self._call(
                self._redis.xreadgroup(
                    GROUP, self._consumer, {self._stream: ">"}, count=limit - len(out)
                )
            )
            for _stream, entries in read or ():
                out.extend(_delivery(e, 1) for e in entries)
        return out

    async def processed(self, delivery: Delivery) -> bool:
        """Whether the id is marked processed (a consumer died between `done`'s mark and
        its acknowledgement cannot happen: they are one transaction; this catches an entry
        claimed from a consumer that finished it meanwhile)."""
        return bool(await self._call(self._redis.get(self._ids + delivery.id)) == b"d")

    async def done(self, deliveries: Sequence[Delivery]) -> None:
        """Mark processed, acknowledge and delete, in one script (`_DONE`)."""
        if not deliveries:
            return
        args: list[Any] = [self._dedupe_s, self._ids, GROUP]
        for d in deliveries:
            args.extend((d.id, d.token, d.tenant))
        await self._call(self._done(keys=[self._stream, self._tenants], args=args))

    async def depth(self) -> int:
        """Entries in the stream: queued or in flight (processed ones are deleted)."""
        return int(await self._call(self._redis.xlen(self._stream)))

    async def rules(self) -> dict[str, bytes]:
        """The stored rules: a hash, name -> serialized rule."""
        got = await self._call(self._redis.hgetall(self._rules))
        return {k.decode(): bytes(v) for k, v in got.items()}

    async def put_rule(self, name: str, body: bytes, *, create: bool) -> bool:
        """Store a rule (HSETNX to create; a script to replace only a stored one)."""
        if create:
            return bool(await self._call(self._redis.hsetnx(self._rules, name, body)))
        return bool(await self._call(self._replace(keys=[self._rules], args=[name, body])))

    async def delete_rule(self, name: str) -> bool:
        """Remove a stored rule."""
        return bool(await self._call(self._redis.hdel(self._rules, name)))

    async def close(self) -> None:
        """Close the client's connections."""
        await self._redis.aclose()


def _delivery(entry: Any, deliveries: int) -> Delivery:
    token, fields = entry
    token = token.decode() if isinstance(token, bytes) else token
    tenant = fields.get(b"t", b"").decode()
    return Delivery(fields[b"id"].decode(), bytes(fields[b"p"]), token, deliveries, tenant)
