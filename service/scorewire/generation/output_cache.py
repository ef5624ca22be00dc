"""The generation cache: providers' answers by a hash of everything that shaped them.

The key covers the provider (backend and model), the rendered prompt and the sampling
parameters sent (`max_tokens`; providers send no temperature), so an identical call is
made once and every later one, in any run and on any replica sharing the store, is
answered from it at no cost. Only answers that produced an output are stored. Each
tenant has its own entries unless tenants trust each other (`tenants_trust_each_other`):
a hit on another tenant's answer would tell one caller what another asked.

The store is the verdict cache's (`scorewire.judge.cache.VerdictCache`: in-memory or
Redis, failing open, short timeouts) under its own key prefix.
"""

from __future__ import annotations

import hashlib
import json

from scorewire.judge.cache import VerdictCache
from scorewire.judge.cache_entry import CachedAnswer
from scorewire.judge.memory_store import DEFAULT_MEMORY_BYTES
from scorewire.judge.redis_store import DEFAULT_EVICTIONS_PER_STORE
from scorewire.judge.stats import JudgeStats

NAMESPACE = "scorewire:generation:"
"""Prefix of every generation key in a shared store."""

KEY_VERSION = 1
"""Changes when what a key covers changes, so old entries are never misread."""


def generation_key(
    provider: str, prompt: str, *, max_tokens: int | None, tenant: str | None = None
) -> str:
    """sha256 over the key version, the provider, the prompt and the sampling parameters,
    and the tenant when tenants keep their generations apart (None: shared by all)."""
    material = json.dumps(
        [KEY_VERSION, provider, prompt, {"max_tokens": max_tokens}, tenant],
        ensure_ascii=False,
        separators=(",", ":"),
    )
    return hashlib.sha256(material.encode()).hexdigest()


def generation_cache(
    url: str,
    *,
    ttl_s: float | None = None,
    timeout_s: float = 0.25,
    backoff_s: float = 2.0,
    pool_size: int = 64,
    tls_ca: str | None = None,
    memory_bytes: int = DEFAULT_MEMORY_BYTES,
    tenant_max_bytes: int | None = None,
    evictions_per_store: int = DEFAULT_EVICTIONS_PER_STORE,
) -> VerdictCache:
    """A generation cache on `memory://` (at most `memory_bytes`) or `redis://…` (the
    verdict cache's URL forms; each tenant holding at most `tenant_max_bytes`, at most
    `evictions_per_store` of its entries leaving per store)."""
    return VerdictCache.from_url(
        url,
        stats=JudgeStats(),
        ttl_s=ttl_s,
        timeout_s=timeout_s,
        backoff_s=backoff_s,
        pool_size=pool_size,
        namespace=NAMESPACE,
        tls_ca=tls_ca,
        memory_bytes=memory_bytes,
        tenant_max_bytes=tenant_max_bytes,
        evictions_per_store=evictions_per_store,
    )


__all__ = ["NAMESPACE", "CachedAnswer", "generation_cache", "generation_key"]
