"""What `scorewire run` prints beyond the totals: one row per assertion, the failing cases
with their reasons, and the prompt × provider matrix of a checkllm suite.

Rows are counted from the run's records, so they are the same in process and with
`--server`: an assertion is one check of one test (checkllm: `tests[i].assert[k]`),
and two `contains` checks of one test are two rows. An evalstone suite's checks are
its rows.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from rich.console import Console
from rich.table import Table
from scorewire.cli.run_output import Record, RunReport, money
from scorewire.core.model import Score
from scorewire.engine.summary import CheckTotals

DEFAULT_SHOW_FAILURES = 10
"""Failing cases `scorewire run` lists unless `--show-failures` says otherwise."""

OUTPUT_CHARS = 160
"""Characters of a failing case's output shown in the console (the files hold all)."""


@dataclass(slots=True)
class AssertionRow:
    """One assertion's totals over every case that ran it."""

    test: str
    """checkllm: `0 capital` (index and description); evalstone: empty."""
    value: str
    """What the assertion looks for (`France`), clipped; empty when it takes nothing."""
    totals: CheckTotals


def clip(text: str, limit: int) -> str:
    """One line of at most `limit` characters."""
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def assertion_rows(report: RunReport) -> list[AssertionRow]:
    """One row per assertion, in the suite's order (tests, then their assertions)."""
    rows: dict[tuple[str, int], AssertionRow] = {}
    for group, labels in report.assertions.items():
        for k, (name, ctype, value) in enumerate(labels):
            rows[(group, k)] = AssertionRow(
                report.test_titles.get(group, ""), value, CheckTotals(name, ctype)
            )
    for r in sorted(report.records, key=lambda r: r.index):
        for k, (name, ctype, s) in enumerate(zip(r.names, r.types, r.scores, strict=True)):
            row = rows.get((r.group, k))
            if row is None:
                row = rows[(r.group, k)] = AssertionRow(
                    report.test_titles.get(r.group, ""), "", CheckTotals(name, ctype)
                )
            row.totals.count(s)
    return list(rows.values())


def print_assertions(console: Console, report: RunReport) -> None:
    """The table: one row per assertion with its pass rate, counts, mean, cost, cache."""
    rows = assertion_rows(report)
    checkllm = report.suite_format == "checkllm"
    # The title is a line of its own: as a table title it would wrap to the table's width.
    console.print(f"scorewire: {report.suite_name}", style="bold", markup=False, soft_wrap=True)
    table = Table()
    show_type = any(r.totals.name != r.totals.type for r in rows)
    show_value = any(r.value for r in rows)
    show_skipped = any(r.totals.skipped for r in rows)
    # On a terminal long texts fold within their column; anywhere else (a log, a pipe)
    # nothing wraps, so each row stays one line.
    narrow = 32 if console.is_terminal else None
    if checkllm:
        table.add_column("test", overflow="fold", min_width=12, max_width=narrow)
    table.add_column("check", overflow="fold", min_width=8)
    if show_type:
        table.add_column("type", overflow="fold", min_width=8)
    if show_value:
        table.add_column("value", overflow="fold", min_width=8, max_width=narrow)
    # Money columns only when something cost or came from a cache (the totals say $0).
    show_money = any(r.totals.cost_usd or r.totals.cached for r in rows)
    # A narrow terminal gets short headings, so the numbers fit beside the texts.
    short = console.is_terminal and console.width < 100
    counts = (
        ["rate", "pass", "fail", "err"] if short else ["pass rate", "passed", "failed", "errors"]
    )
    cols = [*counts, *(["skip" if short else "skipped"] * show_skipped), "mean"]
    for col in (*cols, *(("cost", "cached") if show_money else ())):
        table.add_column(col, justify="right", no_wrap=True)
    for row in rows:
        t = row.totals
        table.add_row(
            *([row.test] if checkllm else []),
            t.name,
            *([t.type] if show_type else []),
            *([row.value] if show_value else []),
            f"{t.passed / t.total:.1%}" if t.total else "-",
            str(t.passed),
            str(t.failed),
            str(t.errored),
            *([str(t.skipped)] if show_skipped else []),
            f"{t.mean_value:.3f}",
            *((money(t.cost_usd), str(t.cached)) if show_money else ()),
        )
    console.print(table)


def _bad(s: Score) -> bool:
    return not s.skipped and (s.error is not None or not s.passed)


def failing_records(report: RunReport) -> list[Record]:
    """Cases with a failed or errored score, in run order."""
    return [
        r for r in sorted(report.records, key=lambda r: r.index) if any(_bad(s) for s in r.scores)
    ]


def print_failures(console: Console, report: RunReport, limit: int) -> None:
    """The first `limit` failing cases: which case, its output, each failing check's reason."""
    failing = failing_records(report)
    if not failing or limit <= 0:
        return
    shown = failing[:limit]
    more = f" (the first {len(shown)}; --show-failures N for more)" if len(failing) > limit else ""
    console.print(f"failures: {len(failing)} cases{more}", style="bold", markup=False)
    for r in shown:
        where = [r.sample.id or f"#{r.index}"]
        if r.description:
            where.append(repr(r.description))
        console.print(f"✗ {' '.join(where)}", style="red", markup=False, highlight=False)
        if r.output is not None:
            console.print(
                f"    output: {clip(r.output.text, OUTPUT_CHARS)}", markup=False, highlight=False
            )
        for name, s in zip(r.names, r.scores, strict=True):
            if not _bad(s):
                continue
            if s.error is not None:
                why = f"ERROR {s.error.code}: {s.error.message}"
            else:
                why = f"FAIL ({s.value:.3g}): {s.reason or 'no reason given'}"
            console.print(f"    {name}: {clip(why, 400)}", markup=False, highlight=False)


def matrix(report: RunReport) -> tuple[list[str], list[str], dict[tuple[int, str], list[int]]]:
    """(prompt labels, providers, (prompt index, provider) -> [cases passed, cases])."""
    cells: dict[tuple[int, str], list[int]] = {}
    providers: list[str] = []
    for r in sorted(report.records, key=lambda r: r.index):
        j = r.sample.metadata.get("prompt_index")
        j = j if isinstance(j, int) else 0
        if r.provider not in providers:
            providers.append(r.provider)
        cell = cells.setdefault((j, r.provider), [0, 0])
        cell[0] += int(r.passed)
        cell[1] += 1
    prompts = report.prompts or [""]
    labels = [f"p{j} {clip(p, 40)}".strip() for j, p in enumerate(prompts)]
    return labels, providers, cells


def print_matrix(console: Console, report: RunReport) -> None:
    """checkllm: the prompt × provider matrix, cases passed per cell."""
    if report.suite_format != "checkllm" or not report.records:
        return
    labels, providers, cells = matrix(report)
    console.print("prompt × provider (cases passed)", style="bold", markup=False, soft_wrap=True)
    table = Table()
    table.add_column("prompt", overflow="fold", max_width=44 if console.is_terminal else None)
    for p in providers:
        table.add_column(p, justify="right", no_wrap=True)
    for j, label in enumerate(labels):
        row = []
        for p in providers:
            cell = cells.get((j, p))
            row.append("-" if cell is None else f"{cell[0]}/{cell[1]} ({cell[0] / cell[1]:.0%})")
        table.add_row(label, *row)
    console.print(table)


def assertion_labels(group_specs: Sequence[object]) -> list[str]:
    """What each assertion of a test looks for (its `value`, clipped), for the table."""
    out = []
    for spec in group_specs:
        params = getattr(spec, "params", {}) or {}
        value: object = ""
        for key in ("value", "needles", "pattern", "expected", "criteria", "instructions"):
            if key in params:
                value = params[key]
                break
        if isinstance(value, list) and len(value) == 1:
            value = value[0]
        out.append(clip(str(value), 60) if value not in ("", None) else "")
    return out
