"""What a judge service is built of, from settings: its backends, its verdict cache, its
server-wide budget, and the Redis its cache, shared budgets and single-flight leases
live in."""

from __future__ import annotations

from typing import Any

from scorewire.judge.backends.base import JudgeBackend
from scorewire.judge.budget import Budget, PeriodBudget
from scorewire.judge.cache import VerdictCache
from scorewire.judge.redis_url import parse_redis_url, redis_client
from scorewire.judge.routing import Endpoint
from scorewire.judge.shared import Ledger, SharedBudget, VerdictLeases
from scorewire.judge.stats import JudgeStats
from scorewire.settings import Settings


def backends_from_slots(slots: dict[str, Endpoint], settings: Settings) -> dict[str, JudgeBackend]:
    """The backends of the configured slots (`routing.endpoints_from_settings`)."""
    backends: dict[str, JudgeBackend] = {}
    openai_slot = slots.get("openai")
    if openai_slot is not None:
        from scorewire.judge.backends.openai_backend import OpenAIBackend

        # Local OpenAI-compatible servers (vLLM, Ollama) need no key, but the SDK
        # insists on one.
        backends["openai"] = OpenAIBackend(
            api_key=openai_slot.api_key or "unused",
            base_url=openai_slot.base_url,
            name=openai_slot.name,
            connections=settings.judge_concurrency,
        )
    anthropic_slot = slots.get("anthropic")
    if anthropic_slot is not None and anthropic_slot.api_key:
        from scorewire.judge.backends.anthropic_backend import AnthropicBackend

        backends["anthropic"] = AnthropicBackend(
            api_key=anthropic_slot.api_key,
            base_url=anthropic_slot.base_url,
            connections=settings.judge_concurrency,
        )
    return backends


def server_budget(settings: Settings, ledger: Ledger | None) -> Budget | None:
    """The server-wide budget per period: in Redis when there is a `ledger`, else in this
    process; None without `judge_budget_usd`."""
    if settings.judge_budget_usd is None:
        return None
    return (
        SharedBudget(
            ledger,
            "server",
            settings.judge_budget_usd,
            period_s=settings.judge_budget_period_s,
        )
        if ledger is not None
        else PeriodBudget(settings.judge_budget_usd, settings.judge_budget_period_s)
    )


def verdict_cache(settings: Settings, stats: JudgeStats, redis: Any = None) -> VerdictCache:
    """The verdict cache `cache_url` names (on `redis`, the client of `shared_client`,
    when given)."""
    return VerdictCache.from_url(
        settings.cache_url,
        stats=stats,
        ttl_s=settings.cache_ttl_s or None,
        timeout_s=settings.cache_timeout_s,
        backoff_s=settings.cache_backoff_s,
        pool_size=settings.cache_pool_size,
        tls_ca=settings.redis_tls_ca,
        redis=redis,
        memory_bytes=settings.cache_memory_bytes,
        tenant_max_bytes=settings.cache_tenant_max_bytes,
        evictions_per_store=settings.cache_tenant_evictions_per_store,
    )


def _redis_cache(settings: Settings) -> bool:
    return settings.cache_url.strip().lower().startswith(("redis://", "rediss://"))


def _budget_url(settings: Settings) -> str:
    return settings.budget_url.get_secret_value() if settings.budget_url is not None else ""


def shared_client(settings: Settings) -> Any:
    """One redis-py client for the verdict cache, the budgets and the leases when they are
    all on the cache's Redis (no `budget_url`), so that a cache read and a lease go in one
    script; else None. Each operation keeps its own timeout (`cache_timeout_s` or
    `budget_timeout_s`); the client's socket timeout is the longer of the two."""
    if not _redis_cache(settings) or _budget_url(settings):
        return None
    return redis_client(
        parse_redis_url(settings.cache_url, "the cache URL"),
        tls_ca=settings.redis_tls_ca,
        timeout_s=max(settings.cache_timeout_s, settings.budget_timeout_s),
        pool_size=settings.cache_pool_size,
    )


def shared_state(
    settings: Settings, stats: JudgeStats, client: Any = None
) -> tuple[Ledger | None, VerdictLeases | None]:
    """The Redis of shared budgets and leases: `budget_url`, else a Redis `cache_url`
    (through `client`, the cache's, when given)."""
    url = _budget_url(settings)
    if not url:
        if not _redis_cache(settings):
            return None, None
        url = settings.cache_url
    target = parse_redis_url(url, "the budget URL" if settings.budget_url else "the cache URL")
    if client is None:
        client = redis_client(
            target,
            tls_ca=settings.redis_tls_ca,
            timeout_s=settings.budget_timeout_s,
            pool_size=settings.cache_pool_size,
        )
    ledger = Ledger(
        client,
        stats=stats,
        description=target.describe(),
        timeout_s=settings.budget_timeout_s,
        hold_ttl_s=settings.budget_reservation_ttl_s,
        poll_s=settings.budget_poll_s,
        fail_open=settings.budget_fail_open,
    )
    leases = None
    # Waiting for another replica's verdict needs a cache every replica reads.
    if _redis_cache(settings) and settings.single_flight_wait_s > 0:
        leases = VerdictLeases(
            client,
            ledger.release_lease,
            stats=stats,
            lease_s=settings.single_flight_lease_s,
            wait_s=settings.single_flight_wait_s,
            poll_s=settings.budget_poll_s,
            timeout_s=settings.budget_timeout_s,
            leftovers=ledger.leftovers,
        )
    return ledger, leases
