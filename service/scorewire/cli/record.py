"""`scorewire run --record`: keep the run in the run store, as the server records its runs.

The store is the one this machine's settings name: PostgreSQL when `SCOREWIRE_RUNS_URL`
is set (a server sharing it lists the run beside its own), else the SQLite file under
the state directory. The run is one run whether it was scored here or on `--server`;
its source is `cli`, and an interrupted run is recorded as incomplete.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence

from scorewire.cli.common import UsageError
from scorewire.cli.run_output import Record, RunReport
from scorewire.runs import (
    Chunk,
    RunInfo,
    RunStatus,
    RunsUnavailable,
    new_run_id,
    open_run_store,
    utc_now,
)
from scorewire.scoring import wire
from scorewire.scoring.recorded import cases_blob, summary_json
from scorewire.settings import Settings
from scorewire.v1 import scoring_pb2 as pb

CHUNK_CASES = 256


def case_pb(r: Record) -> pb.Case:
    """The case of a record as RunSuite would have been sent it."""
    c = pb.Case()
    c.sample.id = r.sample.id
    if r.sample.metadata:  # a checkllm case's test, description, prompt and provider
        safe = json.loads(json.dumps(r.sample.metadata, ensure_ascii=False, default=str))
        wire.py_to_struct(safe, c.sample.metadata)
    if r.sample.input is not None:
        wire.py_to_value(r.sample.input, c.sample.input)
    if r.sample.expected is not None:
        wire.py_to_value(r.sample.expected, c.sample.expected)
    if r.output is not None:
        c.output.text = r.output.text
        if r.output.value is not None:
            wire.py_to_value(r.output.value, c.output.value)
    return c


def result_pb(r: Record) -> pb.CaseResult:
    """The result of a record as RunSuite would have answered it, at the run's index."""
    return pb.CaseResult(
        index=r.index,
        sample_id=r.sample.id,
        passed=r.passed,
        scores=[
            wire.score_to_pb(n, t, s) for n, t, s in zip(r.names, r.types, r.scores, strict=True)
        ],
    )


def check_names(report: RunReport) -> list[str]:
    """Every check name of the run, in order of first appearance."""
    names: list[str] = []
    for r in report.records:
        names.extend(n for n in r.names if n not in names)
    return names


def _chunks(run_id: str, records: Sequence[Record]) -> list[Chunk]:
    out = []
    ordered = sorted(records, key=lambda r: r.index)
    for start in range(0, len(ordered), CHUNK_CASES):
        part = ordered[start : start + CHUNK_CASES]
        results = pb.RunSuiteResponse(
            results=pb.CaseResultBatch(results=[result_pb(r) for r in part])
        )
        out.append(
            Chunk(
                run_id,
                cases_blob([case_pb(r).SerializeToString() for r in part]),
                results.SerializeToString(),
                len(part),
            )
        )
    return out


async def record_report(
    report: RunReport, settings: Settings, *, name: str, labels: dict[str, str], suite: str
) -> str:
    """Store the finished (or interrupted) run; returns its id."""
    names = check_names(report)
    run = RunInfo(
        run_id=new_run_id(),
        name=name,
        source="cli",
        tenant="",
        labels=labels,
        started_at=report.started_at or utc_now(),
        suite=suite,
        suite_sha256=hashlib.sha256(suite.encode("utf-8", "surrogatepass")).hexdigest(),
        checks=names,
    )
    try:
        store = await open_run_store(settings)
    except RunsUnavailable as err:
        raise UsageError(f"--record: {err}") from None
    # The run is written finished, with its results, in one transaction: it is never
    # seen `running` (a server would mark a run of no live owner incomplete).
    run.status = RunStatus.INCOMPLETE if report.interrupted else RunStatus.COMPLETE
    run.ended_at = report.ended_at or utc_now()
    run.summary = None if report.interrupted else summary_json(report.summary)
    try:
        await store.write([run], _chunks(run.run_id, report.records), [])
    except RunsUnavailable as err:
        raise UsageError(f"--record: {err}") from None
    finally:
        await store.close()
    return run.run_id


def parse_labels(values: Sequence[str] | None, settings: Settings) -> dict[str, str]:
    """`--label key=value` flags as a mapping; UsageError for a malformed one."""
    out: dict[str, str] = {}
    for v in values or ():
        key, sep, value = v.partition("=")
        if not sep or not key:
            raise UsageError(f"--label {v!r}: give it as key=value")
        if max(len(key), len(value)) > settings.max_run_label_chars:
            raise UsageError(
                f"--label {key}: longer than SCOREWIRE_MAX_RUN_LABEL_CHARS "
                f"({settings.max_run_label_chars})"
            )
        out[key] = value
    if len(out) > settings.max_run_labels:
        raise UsageError(
            f"{len(out)} labels exceed SCOREWIRE_MAX_RUN_LABELS ({settings.max_run_labels})"
        )
    return out
