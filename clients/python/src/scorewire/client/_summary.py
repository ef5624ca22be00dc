"""Merging the RunSummaries of several shards of one batch, and the gate rule.

A shard's summary carries counts, sums and costs (`passed`, `failed`, `errored`,
`skipped`, `cached`, `value_sum`, `cost_usd` per check and overall; `cases`,
`cases_passed`) and the gate it was judged against. The merged summary adds those and
recomputes every rate from the merged totals, never a mean of means:

- pass_rate = cases_passed / cases;
- mean_score = value_sum / applied, mean_value per check likewise, where
  applied = passed + failed + errored (skipped scores are not applied);
- error_rate = errored / applied;
- unpriced is true when any shard's was;
- the checkllm generation totals (`generation_cost_usd`, `generation_calls`,
  `generation_cached`) are added and `generation_unpriced` is true when any shard's
  was; the prompt × provider `matrix` is merged cell by cell, keyed by (prompt,
  provider), in the order the cells first appear, its counts and costs added and each
  cell's pass rate recomputed;
- `run_id` is empty: each shard was recorded as a run of its own.

One summary alone is returned as it is: it is the server's, judged by the server's rule
(a checkllm suite's default gate included), with its generation totals, matrix and run
id. A batch the client did not split (a suite document with its own cases) has one.

`gate_reasons` is the one place of this client where the gate is judged; it is the
server's rule (`scorewire.engine.summary`), sentence for sentence: a run with no cases
meets no `min_*` threshold; `max_error_rate` always applies (0 unless set).
"""

from __future__ import annotations

from collections.abc import Sequence

from scorewire.v1 import scoring_pb2 as pb


def gate_reasons(gate: pb.Gate, s: pb.RunSummary) -> list[str]:
    """Why `s` fails `gate`, one sentence per unmet threshold (empty: it passes)."""
    reasons = []
    empty = s.cases == 0
    if gate.HasField("min_pass_rate") and (empty or s.pass_rate < gate.min_pass_rate):
        reasons.append(f"pass rate {s.pass_rate:.4g} is below min_pass_rate {gate.min_pass_rate:g}")
    if gate.HasField("min_mean_score") and (empty or s.mean_score < gate.min_mean_score):
        reasons.append(
            f"mean score {s.mean_score:.4g} is below min_mean_score {gate.min_mean_score:g}"
        )
    max_error_rate = gate.max_error_rate if gate.HasField("max_error_rate") else 0.0
    if s.error_rate > max_error_rate:
        reasons.append(f"error rate {s.error_rate:.4g} is above max_error_rate {max_error_rate:g}")
    if gate.HasField("max_cost_usd") and s.cost_usd > gate.max_cost_usd:
        reasons.append(f"cost ${s.cost_usd:.4f} is above max_cost ${gate.max_cost_usd:g}")
    return reasons


def merge_summaries(parts: Sequence[pb.RunSummary]) -> pb.RunSummary:
    """One RunSummary for the shards `parts` of one batch (same checks, same gate).

    Raises ValueError when the parts do not describe the same checks in the same order
    (they were not shards of one run)."""
    if not parts:
        raise ValueError("no summaries to merge")
    first = parts[0]
    out = pb.RunSummary()
    if len(parts) == 1:
        out.CopyFrom(first)
        return out
    out.gate.CopyFrom(first.gate)
    for c in first.checks:
        out.checks.add(name=c.name, type=c.type)
    for p in parts:
        if [(c.name, c.type) for c in p.checks] != [(c.name, c.type) for c in first.checks]:
            raise ValueError("the summaries are of different checks: not shards of one run")
        _add(out, p)
    _merge_matrix(out, parts)
    _rates(out)
    out.gate_reasons.extend(gate_reasons(out.gate, out))
    out.gate_passed = not out.gate_reasons
    return out


def _add(out: pb.RunSummary, p: pb.RunSummary) -> None:
    out.cases += p.cases
    out.cases_passed += p.cases_passed
    out.passed += p.passed
    out.failed += p.failed
    out.errored += p.errored
    out.skipped += p.skipped
    out.value_sum += p.value_sum
    out.cost_usd += p.cost_usd
    out.unpriced = out.unpriced or p.unpriced
    out.generation_cost_usd += p.generation_cost_usd
    out.generation_calls += p.generation_calls
    out.generation_cached += p.generation_cached
    out.generation_unpriced = out.generation_unpriced or p.generation_unpriced
    for total, c in zip(out.checks, p.checks, strict=True):
        total.passed += c.passed
        total.failed += c.failed
        total.errored += c.errored
        total.skipped += c.skipped
        total.cached += c.cached
        total.value_sum += c.value_sum
        total.cost_usd += c.cost_usd


def _merge_matrix(out: pb.RunSummary, parts: Sequence[pb.RunSummary]) -> None:
    cells: dict[tuple[int, str], pb.MatrixCell] = {}
    for p in parts:
        for c in p.matrix:
            total = cells.get((c.prompt, c.provider))
            if total is None:
                total = cells[(c.prompt, c.provider)] = out.matrix.add(
                    prompt=c.prompt, provider=c.provider
                )
            total.cases += c.cases
            total.cases_passed += c.cases_passed
            total.cases_errored += c.cases_errored
            total.generation_cost_usd += c.generation_cost_usd
    for total in out.matrix:
        total.pass_rate = total.cases_passed / total.cases if total.cases else 0.0


def _rates(out: pb.RunSummary) -> None:
    applied = out.passed + out.failed + out.errored
    out.pass_rate = out.cases_passed / out.cases if out.cases else 0.0
    out.mean_score = out.value_sum / applied if applied else 0.0
    out.error_rate = out.errored / applied if applied else 0.0
    for c in out.checks:
        n = c.passed + c.failed + c.errored
        c.mean_value = c.value_sum / n if n else 0.0
