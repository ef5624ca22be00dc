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
    """`redis://` or `rediss://` Redis of the observation queue (a stream shared by replicas;
    no eviction, AOF on); unset: `observe.db` under the state directory."""
    observe_queue_max: int = Field(100_000, ge=1)
    """Most observations queued or being scored; a batch past it is RESOURCE_EXHAUSTED."""
    observe_queue_max_per_tenant: int | None = Field(None, ge=1)
    """Most observations of one tenant (its token's name; with auth off, `metadata.tenant`)
    queued or being scored: a batch past it is RESOURCE_EXHAUSTED naming this setting while
    other tenants' batches are still queued. Unset: only `observe_queue_max` bounds a tenant."""
    observe_dedupe_s: int = Field(900, ge=60)
    """Seconds an observation id is remembered: one sent again within them is a DUPLICATE."""
