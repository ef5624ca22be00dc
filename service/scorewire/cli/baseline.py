"""`scorewire run --baseline RUN_OR_results.json`: gate a run against an earlier one.

The baseline is a results file (`--output` of an earlier run) when that file exists;
otherwise a run id or name (the newest complete run of that name): on the `--server`
when one is given (through its RunService, as the token there may see it), else in the
run store this machine's settings name (`SCOREWIRE_RUNS_URL`, or the SQLite file under
the state directory that `scorewire run --record` writes). The suite's own
`gate.baseline` is used when no flag is given; `gate.max_regression` (default 0) holds
either way. The comparison is the server's (`scorewire.runs.compare`): the gate fails
when a case that passed a check in the baseline fails or errors it now, or a check's
pass rate drops by more than `max_regression`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from scorewire.cli.common import UsageError
from scorewire.cli.remote import ServerTarget
from scorewire.cli.run_output import RunReport
from scorewire.runs import (
    CheckDrift,
    Outcome,
    RunOutcomes,
    RunQuery,
    RunStatus,
    RunsUnavailable,
    baseline_reasons,
    compare,
    iter_results,
    judge_drift,
    open_run_store,
)
from scorewire.settings import Settings

PAGE = 1000


def _json_outcome(s: dict[str, Any]) -> Outcome:
    if s.get("skipped"):
        return Outcome.SKIPPED
    if s.get("error"):
        return Outcome.ERRORED
    return Outcome.PASSED if s.get("passed") else Outcome.FAILED


def _json_reported(s: dict[str, Any]) -> list[str] | None:
    judge = s.get("judge")
    return list(judge.get("reported_models") or []) if isinstance(judge, dict) else None


def outcomes_of_results_file(path: Path) -> RunOutcomes:
    """The outcomes of a results file; UsageError when it is not one."""
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
        results = doc["results"]
        out = RunOutcomes()
        for r in results:
            scores = r["scores"]
            out.add(
                r.get("sample_id") or f"#{r['index']}",
                [s["name"] for s in scores],
                [_json_outcome(s) for s in scores],
                [float(s.get("value") or 0.0) for s in scores],
                r.get("output") or "",
                [_json_reported(s) for s in scores],
            )
    except OSError as err:
        raise UsageError(f"--baseline {path}: cannot read it ({err.strerror})") from None
    except (ValueError, TypeError, KeyError) as err:
        raise UsageError(
            f"--baseline {path}: not a results file of `scorewire run --output` ({err})"
        ) from None
    return out


def outcomes_of_report(report: RunReport) -> RunOutcomes:
    """The outcomes of this run's finished cases."""
    out = RunOutcomes()
    for r in sorted(report.records, key=lambda r: r.index):
        text = r.output.text if r.output is not None else ""
        out.add_scores(r.sample.id or f"#{r.index}", r.names, r.scores, text)
    return out


async def _from_store(settings: Settings, ref: str) -> tuple[str, RunOutcomes]:
    from scorewire.scoring.recorded import CODEC

    try:
        store = await open_run_store(settings)
    except RunsUnavailable as err:
        raise UsageError(f"--baseline {ref}: {err}") from None
    try:
        run = await store.get_run(ref)
        if run is None:
            query = RunQuery(name=ref, status=RunStatus.COMPLETE)
            found = await store.list_runs(query, after=None, limit=1)
            run = found[0] if found else None
        if run is None:
            raise UsageError(
                f"--baseline {ref}: no such results file, and no recorded run has this id "
                "or name in the local run store (record runs with --record, or give --server)"
            )
        out = RunOutcomes()
        async for _, r in iter_results(store, CODEC, run.run_id):
            out.add_record(r)
        return run.run_id, out
    except RunsUnavailable as err:
        raise UsageError(f"--baseline {ref}: {err}") from None
    finally:
        await store.close()


def _pb_outcome(s: Any) -> Outcome:
    if s.skipped:
        return Outcome.SKIPPED
    if s.HasField("error"):
        return Outcome.ERRORED
    return Outcome.PASSED if s.passed else Outcome.FAILED


def _pb_reported(s: Any) -> list[str] | None:
    return list(s.judge.reported_models) if s.HasField("judge") else None


async def _from_server(target: ServerTarget, ref: str) -> tuple[str, RunOutcomes]:
    import grpc
    from scorewire.v1 import runs_pb2 as rpb
    from scorewire.v1 import runs_pb2_grpc as rpb_grpc

    if target.credentials is not None:
        channel = grpc.aio.secure_channel(target.address, target.credentials)
    else:
        channel = grpc.aio.insecure_channel(target.address)
    md = target.metadata
    try:
        stub = rpb_grpc.RunServiceStub(channel)
        try:
            run_id = (await stub.GetRun(rpb.GetRunRequest(run_id=ref), metadata=md)).run.run_id
        except grpc.aio.AioRpcError as err:
            if err.code() != grpc.StatusCode.NOT_FOUND:
                raise
            listing = await stub.ListRuns(
                rpb.ListRunsRequest(name=ref, status=rpb.RUN_STATUS_COMPLETE, page_size=1),
                metadata=md,
            )
            if not listing.runs:
                raise UsageError(
                    f"--baseline {ref}: no such results file, and {target.address} has no "
                    "recorded run with this id or name"
                ) from None
            run_id = listing.runs[0].run_id
        out = RunOutcomes()
        token = ""
        while True:
            page = await stub.ListRunResults(
                rpb.ListRunResultsRequest(run_id=run_id, page_size=PAGE, page_token=token),
                metadata=md,
            )
            for item in page.results:
                r = item.result
                out.add(
                    r.sample_id or f"#{r.index}",
                    [s.name for s in r.scores],
                    [_pb_outcome(s) for s in r.scores],
                    [s.value for s in r.scores],
                    item.case.output.text,
                    [_pb_reported(s) for s in r.scores],
                )
            token = page.next_page_token
            if not token:
                return run_id, out
    except grpc.aio.AioRpcError as err:
        raise UsageError(
            f"--baseline {ref}: {target.address} answered {err.code().name}: {err.details()}"
        ) from None
    finally:
        await channel.close(None)


async def load_baseline(
    ref: str, settings: Settings, server: ServerTarget | str | None
) -> tuple[str, RunOutcomes]:
    """What `ref` names (a results file, else a run id or name) and its outcomes."""
    path = Path(ref)
    if path.is_file():  # noqa: ASYNC240 - the CLI's own loop, before the run starts
        return str(path), outcomes_of_results_file(path)
    if isinstance(server, str):
        server = ServerTarget(server, None, ())
    if server is not None:
        return await _from_server(server, ref)
    return await _from_store(settings, ref)


def judge_against(
    report: RunReport,
    label: str,
    base: RunOutcomes,
    max_regression: float,
    *,
    drift_limit: float = 0.1,
) -> list[str]:
    """Fail the report's gate on regressions against the baseline; returns the reasons.

    Judge drift over the holdout (`scorewire.runs.drift`) past `drift_limit`, or a judge
    whose provider reports another model, is noted beside the totals: it says the judge
    moved, not the outputs, so it does not fail the gate."""
    now = outcomes_of_report(report)
    reasons = baseline_reasons(compare(base, now), max_regression, label)
    if reasons:
        report.summary.gate_passed = False
        report.summary.gate_reasons.extend(reasons)
    report.notes.extend(drift_notes(judge_drift(base, now), drift_limit, label))
    return reasons


def drift_notes(drifts: list[CheckDrift], limit: float, label: str) -> list[str]:
    """A line per judge-backed check that drifted since the baseline `label`."""
    notes = []
    for d in drifts:
        if not d.exceeds(limit):
            continue
        line = (
            f"judge drift: {d.check} moved {d.delta:+.3g} (mean {d.base_mean:.3g} -> "
            f"{d.mean:.3g}) over the {d.holdout} outputs it shares with baseline {label}, "
            f"more than {limit:g}"
        )
        if d.model_changed:
            line = (
                f"judge drift: {d.check}'s judge reported {', '.join(d.models)} "
                f"(was {', '.join(d.base_models)} in baseline {label}); mean moved "
                f"{d.delta:+.3g} over {d.holdout} shared outputs"
            )
        notes.append(line)
    return notes
