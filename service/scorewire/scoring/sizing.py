"""Size a server to the CPU and memory its cgroup allows, for every setting the operator
left unset: scoring workers, the memory each may grow to, and the request bytes held in
flight. A pod with a 1 GiB limit on a 64-core node starts the workers that fit in 1 GiB,
not 64 of them allowed 768 MB each.

The rule, per server process (`--workers` processes share the limit equally):
- workers: the cores the cgroup allows (`Limits.cpus`), fewer when memory is short: each
  needs at least `WORKER_FLOOR` after the serving process's share;
- the serving process keeps `SERVING_BASE` plus the bytes it may hold in flight, which
  is at most a quarter of its share (and the tenant's cap half of that);
- each worker may grow to the rest divided among the workers (at most the default).
Settings the operator gave are kept as given, even when they do not fit.
"""

from __future__ import annotations

from scorewire.core.cgroup import Limits
from scorewire.settings import Settings

MIB = 1 << 20
SERVING_BASE = 192 * MIB
"""The serving process's own memory before requests: the interpreter, gRPC, the checks."""
WORKER_FLOOR = 160 * MIB
"""Least memory worth starting a scoring worker for (an idle one uses ~90 MB)."""


def fit(settings: Settings, limits: Limits) -> Settings:
    """`settings` with the unset sizes fitted to `limits` (the same object when nothing
    changes)."""
    given = settings.model_fields_set
    update: dict[str, int] = {}
    processes = max(1, settings.workers)
    workers = settings.scoring_workers if "scoring_workers" in given else min(256, limits.cpus)
    if limits.memory is not None:
        share = limits.memory // processes
        in_flight = settings.max_bytes_in_flight
        if "max_bytes_in_flight" not in given:
            in_flight = min(in_flight, share // 4)
            update["max_bytes_in_flight"] = in_flight
        if "max_bytes_in_flight_per_tenant" not in given:
            per_tenant = settings.max_bytes_in_flight_per_tenant
            update["max_bytes_in_flight_per_tenant"] = min(per_tenant, in_flight // 2)
        left = max(0, share - SERVING_BASE - in_flight)
        if "scoring_workers" not in given:
            workers = max(1, min(workers or 1, left // WORKER_FLOOR))
        if "scoring_worker_max_rss_mb" not in given:
            each = left // max(1, workers or 1) // MIB
            update["scoring_worker_max_rss_mb"] = max(
                64, min(settings.scoring_worker_max_rss_mb, each)
            )
    if "scoring_workers" not in given and workers is not None:
        update["scoring_workers"] = workers
    changed = {k: v for k, v in update.items() if getattr(settings, k) != v}
    return settings.model_copy(update=changed) if changed else settings
