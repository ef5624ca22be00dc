"""The settings of online evaluation (a part of `Settings`, kept in a module of its own)."""

from __future__ import annotations

from pydantic import BaseModel, Field, SecretStr


class ObserveSettings(BaseModel):
    """Online evaluation: the evaluation rules, the durable observation queue, its share
    per tenant and the cost caps of online scoring."""

    observe_rules_file: str | None = None
    """YAML or JSON file of evaluation rules, loaded at start-up (a bad rule stops it); a
    relative path is under the state directory. Unset: no rules (observations still queue)."""
    observe_queue_url: SecretStr | None = None
    """Where observations are queued, shared by replicas, its scheme picking the engine:
    `redis://` or `rediss://` (a stream with a consumer group; give it a Redis with no
    eviction and AOF on) or `postgresql://` (a table taken with SKIP LOCKED; may be the
    `database_url` database). Unset: `observe.db` under the state directory (never
    `database_url` unless named here). Never logged with its credentials."""
    observe_queue_max: int = Field(100_000, ge=1)
    """Most observations queued or being scored; a batch past it is RESOURCE_EXHAUSTED."""
    observe_queue_max_per_tenant: int | None = Field(None, ge=1)
    """Most observations of one tenant (its token's name; with auth off, `metadata.tenant`)
    queued or being scored: a batch past it is RESOURCE_EXHAUSTED naming this setting while
    other tenants' batches are still queued. Unset: only `observe_queue_max` bounds a tenant."""
    observe_lease_s: float = Field(300.0, ge=90, le=86_400)
    """Seconds an observation handed to a consumer stays hidden from the others: what a
    replica that died holding a batch delays it by before another consumer takes it again
    (at-least-once delivery). It must outlast the longest settle delay (60 s) and the
    scoring of a batch, or a live consumer's batch is handed out twice."""
    observe_dedupe_s: int = Field(900, ge=60)
    """Seconds an observation id is remembered: one sent again within them is a DUPLICATE."""
    observe_rule_cost_cap_hour_usd: float | None = Field(None, ge=0)
    """Dollars the judge calls of one evaluation rule may spend per hour (UTC hours), across
    replicas when the judge's budgets are shared through Redis; a rule's own
    `cost_caps.hour_usd` overrides it. An observation that would pass it is skipped, counted
    with reason `cost_cap`. Unset: no cap."""
    observe_rule_cost_cap_day_usd: float | None = Field(None, ge=0)
    """Dollars one evaluation rule's judge calls may spend per UTC day (a rule's own
    `cost_caps.day_usd` overrides it); as `observe_rule_cost_cap_hour_usd`."""
    observe_tenant_cost_cap_hour_usd: float | None = Field(None, ge=0)
    """Dollars the online evaluation of one tenant's observations may spend on judge calls
    per hour, over every rule; as `observe_rule_cost_cap_hour_usd`. Unset: no cap."""
    observe_tenant_cost_cap_day_usd: float | None = Field(None, ge=0)
    """Dollars one tenant's online evaluation may spend on judge calls per UTC day, over
    every rule; as `observe_tenant_cost_cap_hour_usd`."""
