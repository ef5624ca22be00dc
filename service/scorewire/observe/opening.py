"""Choosing the observation queue's engine and the rules from the settings."""

from __future__ import annotations

from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from scorewire.core.errors import StartupError
from scorewire.judge.redis_url import parse_redis_url, redis_client
from scorewire.observe.costs import check_rule_prices
from scorewire.observe.postgres_queue import PostgresQueue
from scorewire.observe.queue import ObservationQueue, SqliteQueue
from scorewire.observe.redis_queue import RedisQueue
from scorewire.observe.rules import Rule, load_rules_file
from scorewire.settings import Settings

QUEUE_FILE = "observe.db"
"""The embedded queue's SQLite file, under the state directory."""
POSTGRES_SCHEMES = ("postgresql", "postgres")
"""URL schemes that put the queue in PostgreSQL (any other must be Redis's)."""


def queue_url(settings: Settings) -> str | None:
    """The URL of the queue (`observe_queue_url`: Redis or PostgreSQL), else None (the
    SQLite file).

    Never the cache's Redis by default: a cache may evict under memory pressure (the
    compose file's runs `allkeys-lru`), and an acknowledged observation must not be.
    Never `database_url` by default either: a deployment that sets it for its stores
    would, on upgrading, leave what its `observe.db` had acknowledged unscored."""
    if settings.observe_queue_url is not None and settings.observe_queue_url.get_secret_value():
        return settings.observe_queue_url.get_secret_value()
    return None


def open_queue(settings: Settings) -> ObservationQueue:
    """The queue the settings name (not started): the URL's scheme picks the engine;
    StartupError for a bad URL."""
    url = queue_url(settings)
    if url is None:
        path = settings.state_path() / QUEUE_FILE
        return SqliteQueue(
            path,
            max_depth=settings.observe_queue_max,
            max_per_tenant=settings.observe_queue_max_per_tenant,
            dedupe_s=settings.observe_dedupe_s,
            lease_s=settings.observe_lease_s,
        )
    scheme = urlsplit(url.strip()).scheme.lower()
    if scheme in POSTGRES_SCHEMES:
        return PostgresQueue(
            url.strip(),
            max_depth=settings.observe_queue_max,
            max_per_tenant=settings.observe_queue_max_per_tenant,
            dedupe_s=settings.observe_dedupe_s,
            timeout_s=settings.store_timeout_s,
            lease_s=settings.observe_lease_s,
        )
    if not scheme.startswith(("redis", "sentinel")):  # Redis's own are parsed below
        raise StartupError(
            "SCOREWIRE_OBSERVE_QUEUE_URL must start with redis://, rediss:// or postgresql://"
        )
    try:
        target = parse_redis_url(url, "SCOREWIRE_OBSERVE_QUEUE_URL")
    except ValueError as err:
        raise StartupError(str(err)) from None
    client = redis_client(
        target,
        tls_ca=settings.redis_tls_ca,
        timeout_s=settings.store_timeout_s,
        pool_size=16,
        decode_responses=False,
    )
    return RedisQueue(
        client,
        f"redis:{target.describe()}",
        max_depth=settings.observe_queue_max,
        max_per_tenant=settings.observe_queue_max_per_tenant,
        dedupe_s=settings.observe_dedupe_s,
        lease_s=settings.observe_lease_s,
    )


def rules_from_settings(settings: Settings, judge: Any = None) -> list[Rule]:
    """The rules of `observe_rules_file` (none when unset); SpecError naming the field,
    a judge check under a cost cap that `judge` cannot price included."""
    if not settings.observe_rules_file:
        return []
    path = settings.state_path() / Path(settings.observe_rules_file).expanduser()
    rules = load_rules_file(path)
    check_rule_prices(rules, settings, judge, [f"rules[{i}]" for i in range(len(rules))])
    return rules
