"""What `scorewire run` shows and writes: progress, the summary table, results JSON, JUnit.

Results JSON (`--output`, `"format": "scorewire.results/1"`, schema in
`schemas/results.schema.json`; `scorewire label` reads it):

```json
{"format": "scorewire.results/1",
 "suite": {"path": "eval.yaml", "format": "checkllm", "name": "…", "description": "…"},
 "interrupted": false,
 "summary": {"cases": 6, "cases_passed": 5, "pass_rate": 0.83, "mean_score": 0.9,
             "passed": 20, "failed": 1, "errored": 0, "skipped": 0, "error_rate": 0.0,
             "cost_usd": 0.01, "judge_cost_usd": 0.008, "generation_cost_usd": 0.002,
             "unpriced": false, "cached_scores": 3, "cached_generations": 1,
             "saved_usd": 0.004, "budget_usd": 2.0,
             "gate": {"passed": true, "reasons": []},
             "checks": [{"name", "type", "passed", "failed", "errored", "skipped", "pass_rate",
                         "mean_value", "cost_usd", "cached"}]},
 "results": [{"index": 0, "sample_id": "t0/p0/openai:gpt-4o", "group": "t0", "test": 0,
              "prompt_index": 0,
              "description": "…", "provider": "openai:gpt-4o", "prompt": "…",
              "input": {…}, "expected": null, "output": "…", "output_value": null,
              "generation": {"cost_usd", "latency_ms", "cached", "unpriced", "error"},
              "passed": true,
              "scores": [{"name", "type", "value", "passed", "reason", "cost_usd",
                          "latency_ms", "cached", "unpriced", "skipped",
                          "error": {"code", "message"} | null,
                          "spread": {"samples", "stdev", "agreement", "values"} | null}]}]}
```

`results` holds the cases that finished, in run order (an interrupted run's file has
fewer than planned). `output` is null when no output could be produced (then
`generation.error` says why and every score carries that error).

JUnit XML (`--junit`): `<testsuites>` with one `<testsuite>` per check (named after
the check, `classname` `<suite>.<check>`), one `<testcase>` per case (named by its
test's description and its sample id, `return policy [t0/p0/echo]`, or the sample id
alone; its `time` the seconds spent producing the output and scoring the check, to the
microsecond; the root's `time` the run's wall-clock time) holding a `<failure>` when
the check failed, an `<error>` (type = the error code) when it could not score, or
`<skipped>` when its `when:` condition was not met; and a last `<testsuite name="gate">`
whose one case fails when the gate does.
"""

from __future__ import annotations

import json
import math
import re
import sys
import tempfile
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, TextIO

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from scorewire.core.model import Output, Sample, Score, Spread
from scorewire.core.money import usd
from scorewire.engine.summary import Summary

RESULTS_FORMAT = "scorewire.results/1"
"""The `format` of a results JSON file."""


@dataclass(slots=True)
class Record:
    """One finished case as the output files show it."""

    index: int
    sample: Sample
    output: Output | None
    provider: str
    prompt: str | None
    group: str
    description: str
    passed: bool
    names: list[str]
    types: list[str]
    scores: list[Score]
    generation_cost_usd: float = 0.0
    generation_latency_ms: float = 0.0
    generation_cached: bool = False
    generation_unpriced: bool = False
    generation_error: tuple[str, str] | None = None


@dataclass(slots=True)
class RunReport:
    """Everything a finished (or interrupted) run reports."""

    suite_path: str
    suite_format: str
    suite_name: str
    description: str
    summary: Summary
    records: list[Record]
    planned: int
    interrupted: bool = False
    budget_usd: float | None = None
    generation_cost_usd: float = 0.0
    cached_generations: int = 0
    saved_usd: float = 0.0
    notes: list[str] = field(default_factory=list)
    assertions: dict[str, list[tuple[str, str, str]]] = field(default_factory=dict)
    """Group -> (name, type, value looked for) of each of its checks, in plan order."""
    test_titles: dict[str, str] = field(default_factory=dict)
    """checkllm: group -> `<index> <description>`, the console's test column."""
    prompts: list[str] = field(default_factory=list)
    """checkllm: the prompt templates (the matrix's rows)."""
    started_at: datetime | None = None
    """When the run started (UTC)."""
    ended_at: datetime | None = None
    """When it ended (UTC)."""

    @property
    def cost_usd(self) -> float:
        """Judge and generation dollars."""
        return self.summary.cost_usd + self.generation_cost_usd

    @property
    def cached_scores(self) -> int:
        """Scores whose verdict came from a cache."""
        return sum(t.cached for t in self.summary.checks)


def _json_safe(value: Any) -> Any:
    """YAML can hold dates and other non-JSON values: keep their text."""
    return json.loads(json.dumps(value, ensure_ascii=False, default=str))


def _finite(x: float) -> float | None:
    return x if math.isfinite(x) else None


def _score_json(name: str, ctype: str, s: Score) -> dict[str, Any]:
    return {
        "name": name,
        "type": ctype,
        "value": _finite(s.value),
        "passed": s.passed,
        "reason": s.reason,
        "cost_usd": s.cost_usd,
        "latency_ms": round(s.latency_ms, 3),
        "cached": s.cached,
        "unpriced": s.unpriced,
        "skipped": s.skipped,
        "error": None if s.error is None else {"code": s.error.code, "message": s.error.message},
        "spread": None if s.spread is None else spread_json(s.spread),
        "judge": None
        if s.judge is None
        else {
            "models": list(s.judge.models),
            "reported_models": list(s.judge.reported),
            "prompt_version": s.judge.prompt_version,
        },
    }


def spread_json(spread: Spread) -> dict[str, Any]:
    """The results JSON of a repeatedly sampled score's spread."""
    return {
        "samples": spread.n,
        "stdev": spread.stdev,
        "agreement": spread.agreement,
        "values": list(spread.values),
        "judge_calls": spread.calls,
    }


def _record_json(r: Record) -> dict[str, Any]:
    error = r.generation_error
    return {
        "index": r.index,
        "sample_id": r.sample.id,
        "group": r.group,
        "test": r.sample.metadata.get("test"),
        "prompt_index": r.sample.metadata.get("prompt_index"),
        "description": r.description,
        "provider": r.provider,
        "prompt": r.prompt,
        "input": _json_safe(r.sample.input),
        "expected": _json_safe(r.sample.expected),
        "output": None if r.output is None else r.output.text,
        "output_value": None if r.output is None else _json_safe(r.output.value),
        "generation": {
            "cost_usd": r.generation_cost_usd,
            "latency_ms": round(r.generation_latency_ms, 3),
            "cached": r.generation_cached,
            "unpriced": r.generation_unpriced,
            "error": None if error is None else {"code": error[0], "message": error[1]},
        },
        "passed": r.passed,
        "scores": [
            _score_json(n, t, s) for n, t, s in zip(r.names, r.types, r.scores, strict=True)
        ],
    }


def results_document(report: RunReport) -> dict[str, Any]:
    """The results JSON of a run (see the module docstring)."""
    s = report.summary
    return {
        "format": RESULTS_FORMAT,
        "suite": {
            "path": report.suite_path,
            "format": report.suite_format,
            "name": report.suite_name,
            "description": report.description,
        },
        "interrupted": report.interrupted,
        "summary": {
            "cases": s.cases,
            "planned_cases": report.planned,
            "cases_passed": s.cases_passed,
            "pass_rate": s.pass_rate,
            "mean_score": s.mean_score,
            "passed": s.passed,
            "failed": s.failed,
            "errored": s.errored,
            "skipped": s.skipped,
            "error_rate": s.error_rate,
            "cost_usd": report.cost_usd,
            "judge_cost_usd": s.cost_usd,
            "generation_cost_usd": report.generation_cost_usd,
            "unpriced": s.unpriced,
            "cached_scores": report.cached_scores,
            "cached_generations": report.cached_generations,
            "saved_usd": report.saved_usd,
            "budget_usd": report.budget_usd,
            "gate": {"passed": s.gate_passed, "reasons": list(s.gate_reasons)},
            "checks": [
                {
                    "name": t.name,
                    "type": t.type,
                    "passed": t.passed,
                    "failed": t.failed,
                    "errored": t.errored,
                    "skipped": t.skipped,
                    "pass_rate": t.passed / t.total if t.total else 0.0,
                    "mean_value": t.mean_value,
                    "cost_usd": t.cost_usd,
                    "cached": t.cached,
                }
                for t in s.checks
            ],
        },
        "results": [_record_json(r) for r in sorted(report.records, key=lambda r: r.index)],
    }


def write_results_json(path: str, report: RunReport) -> None:
    """Write the results JSON (via a temporary file, so a reader never sees half of it)."""
    _write_atomically(path, json.dumps(results_document(report), ensure_ascii=False, indent=2))


def write_results_csv(path: str, report: RunReport) -> None:
    """Write the results as CSV (RFC 4180 quoting, UTF-8), one row per score: the viewer's
    download of the whole run (`scorewire.viewer.export`), formula cells escaped."""
    from scorewire.viewer.export import cases_csv

    _write_atomically(path, cases_csv(_viewed(report)[1]))


def write_results(path: str, report: RunReport) -> None:
    """`--output`: CSV when the name ends in `.csv`, the HTML report of `scorewire view`
    when it ends in `.html` or `.htm`, else the results JSON."""
    lower = path.lower()
    if lower.endswith(".csv"):
        write_results_csv(path, report)
    elif lower.endswith((".html", ".htm")):
        write_results_html(path, report)
    else:
        write_results_json(path, report)


def write_results_html(path: str, report: RunReport) -> None:
    """The self-contained HTML report `scorewire view` writes, of this run's results."""
    from scorewire.viewer.render import render_report

    _write_atomically(path, render_report(*_viewed(report)))


def _viewed(report: RunReport) -> tuple[Any, list[Any]]:
    """The run and its cases as the viewer reads them from this run's results file."""
    from scorewire.viewer import ResultsFile

    with tempfile.TemporaryDirectory() as scratch:  # the viewer reads a results file
        results = Path(scratch) / "results.json"
        results.write_text(json.dumps(results_document(report), ensure_ascii=False), "utf-8")
        source = ResultsFile(results)
        run_id = source.ids[0]
        return source.get_run(run_id), list(source.results(run_id))


# ---- JUnit XML --------------------------------------------------------------------------------

# Characters XML 1.0 cannot carry at all (control characters other than tab/LF/CR).
_XML_INVALID = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


def _xml_text(text: str, limit: int = 4000) -> str:
    text = _XML_INVALID.sub("\ufffd", text)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def junit_document(report: RunReport) -> ET.Element:
    """The JUnit XML tree of a run (see the module docstring)."""
    suite = report.suite_name or "scorewire"
    by_check: dict[str, list[tuple[Record, Score]]] = {}
    for r in sorted(report.records, key=lambda r: r.index):
        for name, score in zip(r.names, r.scores, strict=True):
            by_check.setdefault(name, []).append((r, score))
    root = ET.Element("testsuites", name=_xml_text(suite))
    total = failures = errors = skipped = 0
    total_time = 0.0
    for name, items in by_check.items():
        ts = ET.SubElement(root, "testsuite", name=_xml_text(name))
        n_fail = n_err = n_skip = 0
        ts_time = 0.0
        seen: dict[str, int] = {}
        for record, score in items:
            case_name = record.sample.id or str(record.index)
            if record.description:
                case_name = f"{record.description} [{case_name}]"
            seen[case_name] = seen.get(case_name, 0) + 1
            if seen[case_name] > 1:
                case_name = f"{case_name} #{seen[case_name]}"
            seconds = (score.latency_ms + record.generation_latency_ms) / 1000.0
            ts_time += seconds
            tc = ET.SubElement(
                ts,
                "testcase",
                name=_xml_text(case_name),
                classname=_xml_text(f"{suite}.{name}"),
                time=f"{seconds:.6f}",
            )
            if score.error is not None:
                n_err += 1
                el = ET.SubElement(
                    tc, "error", message=_xml_text(score.error.message, 500), type=score.error.code
                )
                el.text = _xml_text(score.error.message)
            elif score.skipped:
                n_skip += 1
                ET.SubElement(tc, "skipped", message=_xml_text(score.reason, 500))
            elif not score.passed:
                n_fail += 1
                el = ET.SubElement(
                    tc, "failure", message=_xml_text(score.reason, 500), type="failed"
                )
                el.text = _xml_text(score.reason)
        ts.set("tests", str(len(items)))
        ts.set("failures", str(n_fail))
        ts.set("errors", str(n_err))
        ts.set("skipped", str(n_skip))
        ts.set("time", f"{ts_time:.6f}")
        total += len(items)
        failures += n_fail
        errors += n_err
        skipped += n_skip
        total_time += ts_time
    gate = ET.SubElement(
        root, "testsuite", name="gate", tests="1", errors="0", skipped="0", time="0.000"
    )
    tc = ET.SubElement(gate, "testcase", name="gate", classname=_xml_text(f"{suite}.gate"))
    tc.set("time", "0.000")
    gate_failed = not report.summary.gate_passed
    gate.set("failures", "1" if gate_failed else "0")
    if gate_failed:
        why = "; ".join(report.summary.gate_reasons) or "the gate failed"
        el = ET.SubElement(tc, "failure", message=_xml_text(why, 500), type="gate")
        el.text = _xml_text(why)
    root.set("tests", str(total + 1))
    root.set("failures", str(failures + (1 if gate_failed else 0)))
    root.set("errors", str(errors))
    root.set("skipped", str(skipped))
    if report.started_at is not None and report.ended_at is not None:
        total_time = (report.ended_at - report.started_at).total_seconds()
    root.set("time", f"{total_time:.6f}")
    return root


def write_junit(path: str, report: RunReport) -> None:
    """Write the JUnit XML file."""
    root = junit_document(report)
    ET.indent(root)
    body = ET.tostring(root, encoding="unicode")
    _write_atomically(path, '<?xml version="1.0" encoding="UTF-8"?>\n' + body + "\n")


def _write_atomically(path: str, text: str) -> None:
    target = Path(path)
    tmp = target.with_name(f".{target.name}.tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(target)


# ---- the terminal -------------------------------------------------------------------------------


class RunProgress:
    """A live progress bar on a terminal; on anything else (CI logs, pipes) plain lines at
    every tenth of the run, so the log shows progress without control characters."""

    def __init__(self, *, console: Console) -> None:
        self.total = 0
        self.done = 0
        self.passed = 0
        self.failed = 0
        self.errored = 0
        self._console = console
        self._label = ""
        self._bar: Progress | None = None
        self._task: Any = None
        self._next_line = 0

    def __enter__(self) -> RunProgress:
        if self._console.is_terminal:
            self._bar = Progress(
                TextColumn("[bold]{task.description}"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn("{task.fields[status]}"),
                TimeElapsedColumn(),
                console=self._console,
                transient=False,
            )
            self._bar.start()
        return self

    def phase(self, label: str, total: int) -> None:
        """Start a phase: `scoring` (in process), or `generating` then `scoring` (server)."""
        self._label = label
        self.total = total
        self.done = self.passed = self.failed = self.errored = 0
        self._next_line = 0
        if self._bar is not None:
            self._task = self._bar.add_task(label, total=total, status="")
        else:
            self._console.print(f"scorewire: {label} {total} cases", markup=False)

    def advance(self, *, passed: bool = True, errored: bool = False) -> None:
        """One case finished."""
        self.done += 1
        if errored:
            self.errored += 1
        elif passed:
            self.passed += 1
        else:
            self.failed += 1
        if self._label == "generating":
            status = f"{self.passed} produced, {self.errored} failed"
        else:
            status = f"{self.passed} passed, {self.failed} failed, {self.errored} errored"
        if self._bar is not None:
            self._bar.update(self._task, advance=1, status=status)
            return
        if self.done >= self._next_line or self.done == self.total:
            self._console.print(
                f"scorewire: {self._label} {self.done}/{self.total} ({status})", markup=False
            )
            step = max(1, self.total // 10)
            self._next_line = (self.done // step + 1) * step

    def __exit__(self, *exc: object) -> None:
        if self._bar is not None:
            self._bar.stop()


def money(x: float) -> str:
    """Dollars as the console shows them (as the viewer does)."""
    return usd(x)


def print_totals(console: Console, report: RunReport) -> None:
    """The run's totals (cases, scores, cost, cache), notes and gate verdict."""
    s = report.summary
    lines = [
        f"cases: {s.cases_passed}/{s.cases} passed ({s.pass_rate:.1%})"
        + (f", {report.planned - s.cases} not run" if report.planned > s.cases else ""),
        f"scores: {s.passed} passed, {s.failed} failed, {s.errored} errors"
        + (f", {s.skipped} skipped (condition not met)" if s.skipped else "")
        + f" (error rate {s.error_rate:.1%}), mean {s.mean_score:.3f}",
        f"cost: {money(report.cost_usd)} (judge {money(s.cost_usd)}, generation "
        f"{money(report.generation_cost_usd)})"
        + (f" of a {money(report.budget_usd)} budget" if report.budget_usd is not None else "")
        + (" — some calls are unpriced, the cost is incomplete" if s.unpriced else ""),
        f"cache: {report.cached_scores} cached verdicts, {report.cached_generations} shared "
        f"generations, {money(report.saved_usd)} saved",
    ]
    for line in [*lines, *report.notes]:
        console.print(line, markup=False, highlight=False, soft_wrap=True)
    if report.interrupted:
        console.print("interrupted: the results above cover the cases that finished", markup=False)
    if s.gate_passed:
        console.print("gate: PASSED", style="bold green", markup=False)
    else:
        console.print("gate: FAILED", style="bold red", markup=False)
        for reason in s.gate_reasons:
            console.print(f"  - {reason}", markup=False, highlight=False, soft_wrap=True)


UNWRAPPED_WIDTH = 100_000
"""The console width when the output is not a terminal: lines are never wrapped (a CI
log or a pipe keeps each reason on one line); tables take their natural width."""


def _console(stream: TextIO) -> Console:
    console = Console(file=stream, highlight=False)
    if not console.is_terminal:
        console = Console(file=stream, highlight=False, width=UNWRAPPED_WIDTH)
    return console


def stderr_console() -> Console:
    """Where progress and problems go (not wrapped unless it is a terminal)."""
    return _console(sys.stderr)


def stdout_console(file: TextIO | None = None) -> Console:
    """Where the summary goes (not wrapped unless it is a terminal)."""
    return _console(file or sys.stdout)
