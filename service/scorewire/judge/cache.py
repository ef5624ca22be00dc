"""The verdict cache: raw judge answers by a hash of everything that shaped them.

The key covers the prompt version, the fully rendered prompt, the backend, the model
and the sampling parameters; the value is the judge's raw answer and its token counts.
Storing the raw answer (not a score) means a changed threshold or pass_level is applied
to the cached answer for free. Only answers that parsed as a verdict are stored: errors
never are.

Stores: in-memory (per process, the default; `MemoryStore`) or Redis through aiocache
(shared by every replica and every run). The cache fails open: a Redis that is down or slow costs
at most `timeout_s` per operation, after which it is left alone for `backoff_s`; every
skipped or failed operation is counted in `JudgeStats.cache_bypasses`, and no score
ever fails because of the cache.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from aiocache.serializers import StringSerializer
from scorewire.judge.prompts import PROMPT_VERSION, Prompt
from scorewire.judge.redis_url import RedisTarget, parse_redis_url
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


class MemoryStore:
    """The in-process store: a dict of (value, expiry).

    An expired entry is dropped when it is read, and all of them once the dict has grown
    to twice its size after the last sweep. (aiocache's memory cache kept one event-loop
    timer per entry, so every verdict cached for the default 30 days lay in the loop's
    timer heap for as long, and its reads and writes went through its wait_for, plugin
    and serializer layers: about 10 % of the CPU per judge call.) Reads and writes never
    wait, so the cache does not bound them with a timeout either.
    """

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._cache: dict[str, tuple[str, float | None]] = {}
        self._clock = clock
        self._sweep_at = 1024

    async def get(self, key: str) -> str | None:
        """The value stored under `key`, or None (missing or expired)."""
        entry = self._cache.get(key)
        if entry is None:
            return None
        value, expires = entry
        if expires is not None and self._clock() >= expires:
            del self._cache[key]
            return None
        return value

    async def set(self, key: str, value: str, ttl: float | None = None) -> None:
        """Store `value` under `key` for `ttl` seconds (None or 0: until evicted)."""
        self._cache[key] = (value, self._clock() + ttl if ttl else None)
        if len(self._cache) >= self._sweep_at:
            now = self._clock()
            for k in [k for k, (_, e) in self._cache.items() if e is not None and now >= e]:
                del self._cache[k]
            self._sweep_at = max(1024, 2 * len(self._cache))

    async def close(self) -> None:
        """Nothing to close (the entries live as long as the process)."""


class VerdictCache:
    """Get/set raw answers with short timeouts; failures are counted, never raised."""

    def __init__(
        self,
        store: Any,
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
        # An in-process store never waits: no timeout (an event-loop timer) per operation.
        self._bounded = not isinstance(store, MemoryStore)
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
    ) -> VerdictCache:
        """A cache for `memory://` or a Redis URL (`scorewire.judge.redis_url`).

        `namespace` prefixes every key (the generation cache shares the Redis with its own).
        """
        if urlsplit(url.strip() or "memory://").scheme.lower() == "memory":
            return cls(
                MemoryStore(),
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
        return cls(
            _redis_store(target, timeout_s=timeout_s, pool_size=pool_size, tls_ca=tls_ca),
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
        try:
            if self._bounded:
                async with asyncio.timeout(self._timeout):
                    raw = await self._store.get(self._namespace + key)
            else:
                raw = await self._store.get(self._namespace + key)
        except asyncio.CancelledError:
            raise
        except Exception as err:
            self._failed("get", err)
            return False, None
        return True, CachedAnswer.loads(raw) if raw is not None else None

    async def set(self, key: str, answer: CachedAnswer) -> None:
        """Store an answer; a failure is counted and otherwise ignored."""
        if not self._available():
            self._stats.add("cache_bypasses")
            return
        try:
            if self._bounded:
                async with asyncio.timeout(self._timeout):
                    # A float TTL makes aiocache use PSETEX; an int would use the
                    # deprecated SETEX (a DeprecationWarning per write with redis-py 8).
                    await self._store.set(self._namespace + key, answer.dumps(), ttl=self._ttl)
            else:
                await self._store.set(self._namespace + key, answer.dumps(), ttl=self._ttl)
        except asyncio.CancelledError:
            raise
        except Exception as err:
            self._failed("set", err)

    async def aclose(self) -> None:
        """Close connections to the store."""
        try:
            client = getattr(self._store, "client", None)
            if client is not None:
                # aiocache's close() calls redis-py's deprecated close(); aclose() directly.
                await client.aclose()
            else:
                await self._store.close()
        except Exception:
            log.debug("verdict cache close failed", exc_info=True)


def _redis_store(
    target: RedisTarget, *, timeout_s: float, pool_size: int, tls_ca: str | None
) -> Any:
    from aiocache import RedisCache
    from redis.asyncio import BlockingConnectionPool
    from redis.asyncio.retry import Retry
    from redis.backoff import NoBackoff

    # aiocache passes host, port, db and password itself; the ACL user name and the TLS
    # options go to the connection pool.
    extra = target.connection_kwargs(tls_ca=tls_ca, timeout_s=timeout_s)
    extra.pop("password")
    extra.pop("socket_connect_timeout")
    # redis-py's defaults (5 s socket timeout, several retries with backoff) make one
    # get take seconds when Redis is down or hung; the cache must fail fast instead.
    # BlockingConnectionPool: the default pool raises MaxConnectionsError under load.
    return RedisCache(
        endpoint=target.host,
        port=target.port,
        db=target.db,
        password=target.password,
        ssl=target.tls,
        pool_max_size=pool_size,
        create_connection_timeout=timeout_s,
        connection_pool_class=BlockingConnectionPool,
        connection_pool_kwargs={
            "timeout": timeout_s,
            "retry": Retry(NoBackoff(), 0),
            **extra,
        },
        serializer=StringSerializer(),
        timeout=None,
    )
