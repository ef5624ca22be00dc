"""A run's cases as CSV and JSON: the served viewer's downloads, and the CSV of
`scorewire run --output results.csv` (the CLI reads its results file back as the viewer
does and writes it here: one CSV writer, one set of columns).

CSV: one row per score, so a spreadsheet can pivot by check, test or provider; a cell
a spreadsheet would run as a formula is escaped. JSON: one object per case, as the
results file's `results`."""

from __future__ import annotations

import csv
import io
import json
import math
import re
from collections.abc import Sequence
from typing import Any

from scorewire.viewer.view_model import CaseResult, ScoreResult

CSV_COLUMNS = (
    "index",
    "sample_id",
    "test",
    "description",
    "prompt_index",
    "provider",
    "outcome",
    "input",
    "expected",
    "output",
    "case_cost_usd",
    "latency_ms",
    "check",
    "type",
    "score_outcome",
    "passed",
    "value",
    "reason",
    "error_code",
    "error_message",
    "cost_usd",
    "cached",
)
"""The CSV's header."""

_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
"""A cell a spreadsheet would run as a formula (CSV injection) when it starts so."""


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, default=str)


def _cell(value: Any) -> Any:
    """Text that would start a formula gets a leading `'`, which spreadsheets show as
    text: an output is whatever a model wrote, and must not run in the reader's sheet."""
    if isinstance(value, str) and value.startswith(_FORMULA_START):
        return "'" + value
    return value


def _finite(x: float | None) -> float | None:
    return x if x is not None and math.isfinite(x) else None


def _score_cells(s: ScoreResult | None, generation_error: tuple[str, str] | None) -> list[Any]:
    if s is None:  # a case without scores: why, when its output could not be produced
        code, message = generation_error or ("", "")
        return ["", "", "", "", "", "", code, message, "", ""]
    code, message = s.error or ("", "")
    return [
        s.name, s.type, s.outcome, s.passed, _finite(s.value), s.reason, code, message,
        s.cost_usd, s.cached,
    ]  # fmt: skip


def cases_csv(cases: Sequence[CaseResult]) -> str:
    """The cases as CSV: a header, then a row per score (a case without scores: one row)."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n")
    writer.writerow(CSV_COLUMNS)
    for c in cases:
        head = [
            c.index,
            c.sample_id,
            "" if c.test is None else c.test,
            c.description,
            "" if c.prompt_index is None else c.prompt_index,
            c.provider,
            c.outcome,
            _text(c.input),
            _text(c.expected),
            c.output or "",
            c.cost_usd,
            "" if c.latency_ms is None else c.latency_ms,
        ]
        scores: Sequence[ScoreResult | None] = c.scores or [None]
        for s in scores:
            writer.writerow([_cell(v) for v in (*head, *_score_cells(s, c.generation_error))])
    return out.getvalue()


def _score_json(s: ScoreResult) -> dict[str, Any]:
    return {
        "name": s.name,
        "type": s.type,
        "outcome": s.outcome,
        "value": _finite(s.value),
        "passed": s.passed,
        "reason": s.reason,
        "cost_usd": s.cost_usd,
        "latency_ms": s.latency_ms,
        "error": None if s.error is None else {"code": s.error[0], "message": s.error[1]},
        "spread": None
        if s.spread is None
        else {
            "samples": s.spread.samples,
            "agreement": s.spread.agreement,
            "values": list(s.spread.values),
        },
    }


def cases_json(run_id: str, filters: dict[str, str], cases: Sequence[CaseResult]) -> str:
    """The cases as one JSON document naming the run and the filter that chose them."""
    doc = {
        "run": run_id,
        "filter": filters,
        "cases": [
            {
                "index": c.index,
                "sample_id": c.sample_id,
                "description": c.description,
                "provider": c.provider,
                "outcome": c.outcome,
                "input": c.input,
                "expected": c.expected,
                "output": c.output,
                "cost_usd": c.cost_usd,
                "latency_ms": c.latency_ms,
                "scores": [_score_json(s) for s in c.scores],
            }
            for c in cases
        ],
    }
    return json.dumps(doc, ensure_ascii=False, indent=1, default=str)


def download(
    run_id: str, fmt: str, filters: dict[str, str], cases: Sequence[CaseResult]
) -> tuple[str, str, str]:
    """The download of `cases` as `fmt` (csv or json): (body, Content-Type,
    Content-Disposition naming a file after the run)."""
    stem = re.sub(r"[^A-Za-z0-9._-]+", "_", run_id).strip("._") or "run"
    disposition = f'attachment; filename="{stem}-cases.{fmt}"'
    if fmt == "csv":
        return cases_csv(cases), "text/csv; charset=utf-8", disposition
    return cases_json(run_id, filters, cases), "application/json; charset=utf-8", disposition
