"""Computed views of runs: two runs compared case by case, and checkllm's prompt × provider
matrix. Pure functions of the runs' summaries and cases."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from scorewire.runs import Outcome, RunOutcomes, judge_drift
from scorewire.viewer.view_model import (
    CaseChange,
    CaseResult,
    ChangeKind,
    CheckDelta,
    CheckStats,
    Comparison,
    RunDetail,
)

_ORDER: dict[ChangeKind, int] = {
    "regressed": 0,
    "improved": 1,
    "changed": 2,
    "added": 3,
    "removed": 4,
}


def case_keys(cases: Iterable[CaseResult]) -> dict[str, CaseResult]:
    """Cases by sample id; the n-th repeat of an id (n > 1) is `id#n`, a case without an
    id is `#index`."""
    seen: dict[str, int] = {}
    out: dict[str, CaseResult] = {}
    for case in cases:
        key = case.sample_id or f"#{case.index}"
        seen[key] = seen.get(key, 0) + 1
        out[key if seen[key] == 1 else f"{key}#{seen[key]}"] = case
    return out


def _kind(base: CaseResult, case: CaseResult) -> ChangeKind | None:
    was, now = base.outcome, case.outcome
    if was == "passed" and now in ("failed", "errored"):
        return "regressed"
    if was in ("failed", "errored") and now == "passed":
        return "improved"
    if was != now or base.output != case.output:
        return "changed"
    return None


def check_deltas(base: Sequence[CheckStats], run: Sequence[CheckStats]) -> list[CheckDelta]:
    """Per-check deltas by check name, the largest pass-rate drop first."""
    before = {c.name: c for c in base}
    after = {c.name: c for c in run}
    names = [*after, *(n for n in before if n not in after)]
    deltas = [
        CheckDelta(
            name=n,
            base_pass_rate=before[n].pass_rate if n in before else None,
            pass_rate=after[n].pass_rate if n in after else None,
            base_mean=before[n].mean_value if n in before else None,
            mean=after[n].mean_value if n in after else None,
        )
        for n in names
    ]
    # Stable: checks that did not move keep the suite's order.
    return sorted(deltas, key=lambda d: d.delta if d.delta is not None else 0.0)


def compare_runs(
    base: RunDetail,
    base_cases: Iterable[CaseResult],
    run: RunDetail,
    cases: Iterable[CaseResult],
) -> Comparison:
    """`run` against `base`: cases matched by sample id, regressions first (then improved,
    changed output or outcome, added, removed; each in the compared run's order)."""
    before = case_keys(base_cases)
    after = case_keys(cases)
    changes: list[CaseChange] = []
    unchanged = 0
    for key, case in after.items():
        old = before.get(key)
        if old is None:
            changes.append(CaseChange("added", key, None, case))
            continue
        kind = _kind(old, case)
        if kind is None:
            unchanged += 1
        else:
            changes.append(CaseChange(kind, key, old, case))
    changes.extend(CaseChange("removed", k, c, None) for k, c in before.items() if k not in after)
    changes.sort(key=lambda c: _ORDER[c.kind])
    drift = judge_drift(_outcomes(before), _outcomes(after))
    return Comparison(base, run, check_deltas(base.checks, run.checks), changes, unchanged, drift)


_OUTCOMES = {
    "passed": Outcome.PASSED,
    "failed": Outcome.FAILED,
    "errored": Outcome.ERRORED,
    "skipped": Outcome.SKIPPED,
}


def _outcomes(cases: dict[str, CaseResult]) -> RunOutcomes:
    """The cases as the runs' comparison counts them, for its judge drift (one
    implementation of the holdout and its means: `scorewire.runs.drift`)."""
    out = RunOutcomes()
    for key, case in cases.items():
        scores = case.scores
        out.add(
            key,
            [s.name for s in scores],
            [_OUTCOMES[s.outcome] for s in scores],
            [s.value or 0.0 for s in scores],
            case.output or "",
            [s.reported_models if s.judges else None for s in scores],
        )
    return out


# ---- checkllm's assertions and prompt × provider matrix ----------------------------------------

_SAMPLE_ID = re.compile(r"^t(\d+)/p(\d+)/(.+)$")


def assertion_stats(checks: Sequence[CheckStats], cases: Iterable[CaseResult]) -> list[CheckStats]:
    """The rows of a run's checks table, as the CLI's: for a checkllm run (every case's
    sample id is `t<test>/p<prompt>/<provider>`) one row per test and assertion, its
    totals counted from the cases, so that `contains` in two tests is two rows; for any
    other run the summary's rows, `checks`."""
    rows: dict[tuple[int, int], list[Any]] = {}
    for case in cases:
        match = _SAMPLE_ID.match(case.sample_id)
        if match is None:
            return list(checks)
        test = int(match.group(1))
        for k, s in enumerate(case.scores):
            row = rows.get((test, k))
            if row is None:
                title = f"{test} {case.description}".strip()
                row = rows[(test, k)] = [s.name, s.type, title, 0, 0, 0, 0, 0.0, 0.0, 0]
            outcome = s.outcome
            row[3 + ("passed", "failed", "errored", "skipped").index(outcome)] += 1
            if outcome != "skipped":
                row[7] += s.value or 0.0  # errors count as 0, as in the summary
            row[8] += s.cost_usd
            row[9] += s.cached and outcome != "skipped"
    if not rows:
        return list(checks)
    out = []
    for key in sorted(rows):
        name, ctype, title, passed, failed, errored, skipped, value_sum, cost, cached = rows[key]
        applied = passed + failed + errored
        out.append(
            CheckStats(
                name,
                ctype,
                passed,
                failed,
                errored,
                skipped,
                value_sum / applied if applied else 0.0,
                cost,
                cached,
                test=title,
            )
        )
    return out


@dataclass(slots=True)
class Tally:
    """Passes out of a count."""

    passed: int = 0
    """How many passed."""
    total: int = 0
    """How many were counted."""

    @property
    def rate(self) -> float:
        """passed / total, 0 when nothing was counted."""
        return self.passed / self.total if self.total else 0.0


CELL_OUTPUTS = 10
"""Outputs a matrix cell shows."""


@dataclass(slots=True)
class Cell:
    """One prompt with one provider: its cases and each assertion's scores."""

    cases: Tally = field(default_factory=Tally)
    """Cases whose every score passed."""
    checks: dict[str, Tally] = field(default_factory=dict)
    """Per assertion (check name): scores that passed (skipped ones not counted)."""
    outputs: list[CaseResult] = field(default_factory=list)
    """Its first `CELL_OUTPUTS` cases, whose outputs the cell shows (the cases table has
    the others): a 20,000-case run's matrix stays a page, not every output twice."""


@dataclass(slots=True)
class Matrix:
    """Pass rates per prompt (rows) and provider (columns), like promptfoo's."""

    prompts: list[str]
    """Row keys: `p0`, `p1`, ... (the prompt's index), in order."""
    examples: dict[str, str]
    """A rendered prompt of each row, to show what the row's template produces."""
    providers: list[str]
    """Column keys: provider ids, in order of appearance."""
    cells: dict[tuple[str, str], Cell]
    """(prompt, provider) -> its cell; a missing cell had no cases."""


def _prompt_order(row: str) -> tuple[bool, int]:
    numbered = row.startswith("p") and row[1:].isdigit()
    return (not numbered, int(row[1:]) if numbered else 0)


def prompt_matrix(cases: Iterable[CaseResult]) -> Matrix | None:
    """The matrix of a checkllm run, or None when the cases carry no prompt/provider.

    The prompt is the one whose index the sample id names (`t<test>/p<prompt>/<provider>`):
    results carry the rendered prompt, which differs per test.
    """
    prompts: dict[str, None] = {}
    providers: dict[str, None] = {}
    examples: dict[str, str] = {}
    cells: dict[tuple[str, str], Cell] = {}
    for case in cases:
        match = _SAMPLE_ID.match(case.sample_id)
        if match is None and not case.prompt:
            continue
        row = f"p{match.group(2)}" if match else case.prompt or ""
        column = case.provider or (match.group(3) if match else "")
        prompts.setdefault(row, None)
        providers.setdefault(column, None)
        if case.prompt and row not in examples:
            examples[row] = case.prompt
        cell = cells.setdefault((row, column), Cell())
        cell.cases.total += 1
        cell.cases.passed += case.outcome == "passed"
        if len(cell.outputs) < CELL_OUTPUTS:
            cell.outputs.append(case)
        for score in case.scores:
            if score.outcome == "skipped":
                continue
            tally = cell.checks.setdefault(score.name, Tally())
            tally.total += 1
            tally.passed += score.outcome == "passed"
    if not cells:
        return None
    order = sorted(prompts, key=_prompt_order)
    return Matrix(order, examples, list(providers), cells)
