"""A finished job's summary, computed from its recorded run: the run's totals and, per
check, the aggregations Vertex AI's EvaluateDataset reports (average, mode, std,
variance, min, max, median, p90, p95, p99).

Read from the run store rather than added up as chunks finish: a job resumed by another
replica has no running totals, but its run holds every recorded case exactly once. The
values aggregated are those of scores applied without error (a skipped or errored score
has no value to aggregate); `count` says how many.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from typing import Any

from scorewire.engine.summary import SummaryBuilder
from scorewire.runs import RunStore, iter_chunks
from scorewire.scoring.recorded import CODEC, summary_json

AGGREGATIONS = ("average", "mode", "std", "variance", "min", "max", "median", "p90", "p95", "p99")


def percentile(ordered: Sequence[float], q: float) -> float:
    """The `q` quantile (0 to 1) of sorted values, interpolated linearly between the two
    nearest ranks (numpy's default)."""
    if not ordered:
        return 0.0
    at = q * (len(ordered) - 1)
    low = math.floor(at)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (at - low)


def aggregations(values: Sequence[float]) -> dict[str, float | int]:
    """The aggregations of one check's values (all 0 when there are none)."""
    if not values:
        return {"count": 0, **dict.fromkeys(AGGREGATIONS, 0.0)}
    ordered = sorted(values)
    n = len(ordered)
    mean = math.fsum(ordered) / n
    variance = math.fsum((v - mean) ** 2 for v in ordered) / n
    counts = Counter(ordered)
    top = max(counts.values())
    return {
        "count": n,
        "average": mean,
        "mode": min(v for v, c in counts.items() if c == top),
        "std": math.sqrt(variance),
        "variance": variance,
        "min": ordered[0],
        "max": ordered[-1],
        "median": percentile(ordered, 0.5),
        "p90": percentile(ordered, 0.9),
        "p95": percentile(ordered, 0.95),
        "p99": percentile(ordered, 0.99),
    }


async def run_summary(
    store: RunStore, run_id: str, names: Sequence[str], types: Sequence[str]
) -> dict[str, Any]:
    """The run's summary as stored with a run (`summary_json`) and, per check in plan
    order, its `aggregations`, from every case recorded in the run."""
    builder = SummaryBuilder(names, types)
    values: list[list[float]] = [[] for _ in names]
    async for _, chunk in iter_chunks(store, run_id):
        records = CODEC.decode(chunk)
        cases_passed = 0
        per_check = [[0, 0, 0, 0, 0.0, 0.0, 0, 0] for _ in names]
        for record in records:
            cases_passed += record.passed
            for i, s in enumerate(record.scores):
                c = per_check[i]
                c[5] += s.cost_usd
                if s.skipped:
                    c[3] += 1
                    continue
                errored = bool(s.error_code or s.error_message)
                c[2 if errored else 0 if s.passed else 1] += 1
                c[4] += s.value
                c[6] += s.cached
                if not errored:
                    values[i].append(s.value)
        builder.add_counts((len(records), cases_passed, [tuple(c) for c in per_check]))  # type: ignore[misc]
    summary = summary_json(builder.finish(None))
    # Beside `checks`, not inside: every reader of a stored summary keeps working.
    summary["aggregations"] = [
        {"name": name, **aggregations(vs)} for name, vs in zip(names, values, strict=True)
    ]
    return summary
