"""The observation queue on Redis Streams, shared by every replica through a consumer group.

Each observation is one stream entry; its id is also a key (`…:id:<id>`) that says it was
queued (`q`) or processed (`d`) and expires the dedupe window after it was queued, and
again after it was scored. One
script checks room, refuses duplicate ids and appends the batch, atomically (Redis runs
it alone); with Redis's AOF on `everysec` (the usual setting) an acknowledged write
survives a Redis restart but for the last second, with `always` entirely.

Consumers read with XREADGROUP; an entry a dead consumer held longer than the lease is
claimed by another (XAUTOCLAIM). `done` marks the ids processed, acknowledges and deletes
the entries in one transaction, so the stream's length is the queue's depth.
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
)

PREFIX = "scorewire:observe"
GROUP = "scorewire-observe"

# KEYS[1] the stream; ARGV: max depth, id TTL (s), id key prefix, then id, payload pairs.
# Returns -1 - depth when the new ones do not fit, else one 1 (queued) or 0 per id.
_PUT = """
local depth = redis.call('XLEN', KEYS[1])
local fresh, seen = 0, {}
for i = 4, #ARGV, 2 do
  local id = ARGV[i]
  if not seen[id] and redis.call('EXISTS', ARGV[3] .. id) == 0 then fresh = fresh + 1 end
  seen[id] = true
end
if depth + fresh > tonumber(ARGV[1]) then return -1 - depth end
local out = {}
for i = 4, #ARGV, 2 do
  local id = ARGV[i]
  if redis.call('SET', ARGV[3] .. id, 'q', 'NX', 'EX', ARGV[2]) then
    redis.call('XADD', KEYS[1], '*', 'id', id, 'p', ARGV[i + 1])
    out[#out + 1] = 1
  else
    out[#out + 1] = 0
  end
end
return out
"""


class RedisQueue:
    """Observations in a Redis stream read by one consumer group (see the module)."""

    def __init__(
        self,
        client: Any,
        description: str,
        *,
        max_depth: int,
        lease_s: float = DEFAULT_LEASE_S,
        dedupe_s: float = DEDUPE_WINDOW_S,
    ) -> None:
        self._dedupe_s = max(1, int(dedupe_s))
        self._redis = client
        self.description = description
        self._max = max_depth
        self._lease_ms = int(lease_s * 1000)
        self._stream = f"{PREFIX}:stream"
        self._ids = f"{PREFIX}:id:"
        self._consumer = "c_" + uuid.uuid4().hex[:16]
        self._put = client.register_script(_PUT)
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

    async def put(self, items: Sequence[tuple[str, bytes]]) -> list[bool]:
        """Queue the batch in one script (see `ObservationQueue.put`)."""
        if not self._ready:  # Redis did not answer at start-up
            await self.start()
        args: list[Any] = [self._max, self._dedupe_s, self._ids]
        for i, p in items:
            args.extend((i, p))
        got = await self._call(self._put(keys=[self._stream], args=args))
        if isinstance(got, int):
            depth = -1 - got
            raise QueueFull(
                f"the observation queue holds {depth} of at most {self._max} "
                "(SCOREWIRE_OBSERVE_QUEUE_MAX): the batch does not fit"
            )
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
        """Mark processed, acknowledge and delete, in one MULTI/EXEC."""
        if not deliveries:
            return
        pipe = self._redis.pipeline(transaction=True)
        for d in deliveries:
            pipe.set(self._ids + d.id, "d", ex=self._dedupe_s)
        tokens = [d.token for d in deliveries]
        pipe.xack(self._stream, GROUP, *tokens)
        pipe.xdel(self._stream, *tokens)
        await self._call(pipe.execute())

    async def depth(self) -> int:
        """Entries in the stream: queued or in flight (processed ones are deleted)."""
        return int(await self._call(self._redis.xlen(self._stream)))

    async def close(self) -> None:
        """Close the client's connections."""
        await self._redis.aclose()


def _delivery(entry: Any, deliveries: int) -> Delivery:
    token, fields = entry
    token = token.decode() if isinstance(token, bytes) else token
    return Delivery(fields[b"id"].decode(), bytes(fields[b"p"]), token, deliveries)
