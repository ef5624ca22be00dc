"""Recording RunSuite and ScoreStream calls: the protobuf side of the run store.

A chunk's `cases` are the serialized cases as sent (`cases_blob`), and its `results` a
serialized `RunSuiteResponse` with the results as sent; the i-th case belongs to the
i-th result. The scoring path only concatenates bytes it already has; `PbChunkCodec`
decodes on read.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from collections.abc import Mapping, Sequence
from typing import Any

import grpc
from google.protobuf import json_format
from scorewire.core.errors import FieldViolation
from scorewire.engine.summary import Summary
from scorewire.runs import (
    Chunk,
    Outcome,
    RunInfo,
    RunOutcomes,
    RunQuery,
    RunRecorder,
    RunStatus,
    RunsUnavailable,
    baseline_reasons,
    compare,
    iter_results,
    new_run_id,
    utc_now,
)
from scorewire.scoring.recorded import CODEC
from scorewire.scoring.recorded import summary_json as summary_json
from scorewire.server.security import Principal, Role
from scorewire.server.status import RequestRejected, invalid_argument, resource_exhausted
from scorewire.settings import Settings
from scorewire.v1 import scoring_pb2 as pb

RUN_ID_METADATA = "scorewire-run-id"
"""Initial metadata key carrying a recorded call's run id."""

NO_STORE = "this server keeps no run store, so it cannot record or read runs"
STORE_DOWN = "the run cannot be recorded or read now; retry later"


def unavailable(err: RunsUnavailable | None = None) -> RequestRejected:
    """UNAVAILABLE for a store that failed, in the store's words (which name it and what
    happened; the driver's detail went to the log), or for a server with no store."""
    if err is None:
        return RequestRejected(grpc.StatusCode.UNAVAILABLE, NO_STORE)
    return RequestRejected(grpc.StatusCode.UNAVAILABLE, f"{err}: {STORE_DOWN}")


# ---- summaries as JSON (the results file's shape, plain numbers) -------------------------


def summary_pb(d: Mapping[str, Any], run_id: str) -> pb.RunSummary:
    """A stored summary as the RunSummary message."""
    gate = d.get("gate", {})
    return pb.RunSummary(
        cases=d["cases"],
        cases_passed=d["cases_passed"],
        passed=d["passed"],
        failed=d["failed"],
        errored=d["errored"],
        skipped=d["skipped"],
        pass_rate=d["pass_rate"],
        mean_score=d["mean_score"],
        error_rate=d["error_rate"],
        cost_usd=d["cost_usd"],
        unpriced=d["unpriced"],
        gate_passed=gate.get("passed", False),
        gate_reasons=gate.get("reasons", []),
        checks=[pb.CheckSummary(**c) for c in d["checks"]],
        run_id=run_id,
    )


# ---- who sees which runs ------------------------------------------------------------------


def visible_tenant(who: Principal | None) -> str | None:
    """The tenant whose runs `who` sees: its own; None (every tenant) for admin or no auth."""
    if who is None or who.role == Role.ADMIN:
        return None
    return who.name


async def visible_run(recorder: RunRecorder, run_id: str, who: Principal | None) -> RunInfo | None:
    """The run, when it exists and `who` may see it."""
    try:
        run = await recorder.store.get_run(run_id)
    except RunsUnavailable as err:
        raise unavailable(err) from None
    tenant = visible_tenant(who)
    if run is None or (tenant is not None and run.tenant != tenant):
        return None
    return run


async def run_outcomes(recorder: RunRecorder, run_id: str) -> RunOutcomes:
    """Every recorded case of the run, as a comparison reads them."""
    out = RunOutcomes()
    try:
        async for _, r in iter_results(recorder.store, CODEC, run_id):
            out.add(
                r.key,
                [s.name for s in r.scores],
                [s.outcome for s in r.scores],
                [s.value for s in r.scores],
                r.output,
            )
    except RunsUnavailable as err:
        raise unavailable(err) from None
    return out


# ---- one recorded call ------------------------------------------------------------------


def check_run_fields(
    run_name: str, labels: Mapping[str, str], settings: Settings, base: str
) -> dict[str, str]:
    """The request's run name and labels, within the settings' limits."""
    prefix = f"{base}." if base else ""
    longest = settings.max_run_label_chars
    if len(labels) > settings.max_run_labels:
        raise resource_exhausted(
            f"{prefix}labels",
            f"{len(labels)} labels exceed max_run_labels ({settings.max_run_labels})",
        )
    violations = []
    if len(run_name) > longest:
        raise resource_exhausted(
            f"{prefix}run_name", f"longer than max_run_label_chars ({longest} characters)"
        )
    if "\x00" in run_name:
        violations.append(FieldViolation(f"{prefix}run_name", "must not contain NUL characters"))
    for k, v in labels.items():
        where = f"{prefix}labels[{json.dumps(k, ensure_ascii=False)}]"
        if not k:
            violations.append(FieldViolation(where, "label keys must not be empty"))
        if len(k) > longest or len(v) > longest:
            raise resource_exhausted(
                where, f"key or value longer than max_run_label_chars ({longest} characters)"
            )
        if "\x00" in k or "\x00" in v:
            violations.append(FieldViolation(where, "must not contain NUL characters"))
    if violations:
        raise invalid_argument(violations)
    return dict(labels)


def suite_text(
    suite_yaml: str,
    suite_name: str,
    checks: Sequence[pb.CheckSpec],
    compact: Sequence[str],
    gate: pb.Gate | None,
) -> str:
    """The suite as sent: the YAML document, or the checks, compact lines and gate as JSON."""
    if suite_yaml:
        return suite_yaml
    doc: dict[str, Any] = {
        "checks": [json_format.MessageToDict(c, preserving_proto_field_name=True) for c in checks],
        "compact": list(compact),
    }
    if suite_name:
        doc["suite_name"] = suite_name
    if gate is not None:
        doc["gate"] = json_format.MessageToDict(gate, preserving_proto_field_name=True)
    return json.dumps(doc, ensure_ascii=False, sort_keys=True)


class Recording:
    """One call being recorded: begin, append chunks (stored before they are sent), end."""

    def __init__(self, recorder: RunRecorder, run: RunInfo) -> None:
        self._recorder = recorder
        self.run = run
        self._finished = False
        self.count = 0

    @classmethod
    async def begin(
        cls,
        recorder: RunRecorder,
        *,
        name: str,
        source: str,
        who: Principal | None,
        labels: dict[str, str],
        suite: str,
        checks: Sequence[str],
        context: Any,
    ) -> Recording:
        """Create the run in the store, and tell the caller its id (initial metadata)."""
        run = RunInfo(
            run_id=new_run_id(),
            name=name,
            source=source,
            tenant=who.name if who is not None else "",
            labels=labels,
            started_at=utc_now(),
            suite=suite,
            suite_sha256=hashlib.sha256(suite.encode("utf-8", "surrogatepass")).hexdigest(),
            checks=list(checks),
        )
        try:
            await recorder.begin(run)
        except RunsUnavailable as err:
            raise unavailable(err) from None
        await context.send_initial_metadata(((RUN_ID_METADATA, run.run_id),))
        return cls(recorder, run)

    def submit(self, cases: bytes, results: bytes, count: int) -> asyncio.Future[None]:
        """Start storing one chunk; the future is done after its commit (then send it).

        Chunks submitted one after another are stored in that order."""
        task = asyncio.ensure_future(self.append(cases, results, count))
        _BACKGROUND.add(task)
        task.add_done_callback(_done)  # a failure not awaited (the call failed) is logged away
        return task

    async def append(self, cases: bytes, results: bytes, count: int) -> None:
        """Store one chunk; returns after its commit."""
        try:
            await self._recorder.append(Chunk(self.run.run_id, cases, results, count))
        except RunsUnavailable as err:
            raise unavailable(err) from None
        self.count += count

    async def complete(self, summary: Summary | None) -> None:
        """Record the end: complete with its summary (or, with None, a complete stream)."""
        self.run.status = RunStatus.COMPLETE
        self.run.ended_at = utc_now()
        self.run.summary = None if summary is None else summary_json(summary)
        try:
            await self._recorder.finish(self.run)
        except RunsUnavailable as err:
            raise unavailable(err) from None  # abandon() then tries to mark it incomplete
        self._finished = True

    def abandon(self) -> None:
        """Mark the run incomplete (the call failed or was cancelled), in the background."""
        if self._finished:
            return
        self._finished = True
        self.run.status = RunStatus.INCOMPLETE
        self.run.ended_at = utc_now()
        task = asyncio.ensure_future(self._recorder.finish(self.run))
        _BACKGROUND.add(task)
        task.add_done_callback(_done)


_BACKGROUND: set[asyncio.Future[None]] = set()


def _done(task: asyncio.Future[None]) -> None:
    _BACKGROUND.discard(task)
    if not task.cancelled():
        task.exception()  # a store that failed: the heartbeat check marks the run later


# ---- the baseline gate ---------------------------------------------------------------------


async def resolve_baseline(
    recorder: RunRecorder | None, ref: str, who: Principal | None
) -> tuple[str, RunOutcomes]:
    """The baseline run's id and outcomes; INVALID_ARGUMENT naming `gate.baseline` if none."""
    if recorder is None:
        raise invalid_argument(
            [FieldViolation("gate.baseline", "this server keeps no run store to compare with")]
        )
    run = await visible_run(recorder, ref, who)
    if run is None:
        query = RunQuery(tenant=visible_tenant(who), name=ref, status=RunStatus.COMPLETE)
        try:
            found = await recorder.store.list_runs(query, after=None, limit=1)
        except RunsUnavailable as err:
            raise unavailable(err) from None
        run = found[0] if found else None
    if run is None:
        raise invalid_argument(
            [
                FieldViolation(
                    "gate.baseline",
                    f"no recorded run has the id or name {ref!r} (record one with record: true)",
                )
            ]
        )
    return run.run_id, await run_outcomes(recorder, run.run_id)


class BaselineGate:
    """The current run's outcomes, judged against a baseline's at the end."""

    def __init__(self, run_id: str, base: RunOutcomes, max_regression: float) -> None:
        self.run_id = run_id
        self.base = base
        self.max_regression = max_regression
        self.now = RunOutcomes()

    def add(self, names: Sequence[str], results: Sequence[Any]) -> None:
        """Count finished engine results."""
        for r in results:
            self.now.add_scores(r.sample_id or f"#{r.index}", names, r.scores)

    def add_message(self, names: Sequence[str], message: bytes) -> None:
        """Count the results of a serialized RunSuiteResponse (a scoring worker's chunk)."""
        for r in pb.RunSuiteResponse.FromString(message).results.results:
            outcomes = [
                Outcome.SKIPPED
                if s.skipped
                else Outcome.ERRORED
                if s.error.code or s.error.message
                else Outcome.PASSED
                if s.passed
                else Outcome.FAILED
                for s in r.scores
            ]
            self.now.add(r.sample_id or f"#{r.index}", names, outcomes, [s.value for s in r.scores])

    def judge(self, summary: Summary) -> None:
        """Fail the summary's gate on regressions, with the reasons."""
        reasons = baseline_reasons(compare(self.base, self.now), self.max_regression, self.run_id)
        if reasons:
            summary.gate_passed = False
            summary.gate_reasons.extend(reasons)
