"""Rolling runs: the scores of online evaluation, one run per rule, tenant and UTC day.

A run `observe/<rule>/<day>` is recorded in the tenant whose observations it scores (the
tenant of the caller that sent them), so another tenant's token can neither list nor
read it, as with every other recorded run.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime

from google.protobuf import json_format
from scorewire.engine.runner import CaseResult
from scorewire.engine.summary import SummaryBuilder
from scorewire.observe.rules import Rule
from scorewire.observe.wire import rule_to_pb
from scorewire.runs import Chunk, RunInfo, RunRecorder, RunStatus, new_run_id, utc_now
from scorewire.scoring import wire
from scorewire.scoring.recorded import cases_blob, summary_json

RUN_SOURCE = "Observe"


def scope(rule: str, tenant: str) -> str:
    """Where a rule's recorded observations of one tenant are keyed (over every day and
    process: a redelivery may come to another replica, or after midnight)."""
    return json.dumps(["observe", rule, tenant])


@dataclass(slots=True)
class _Rolling:
    """One rule's run for one tenant and UTC day, recorded by this process."""

    run: RunInfo
    day: str
    summary: SummaryBuilder
    rule: Rule
    """The rule as it was when the run began: a changed rule begins a new run."""
    count: int = 0


@dataclass(slots=True)
class RollingRuns:
    """The rolling runs of this process, opened on first score."""

    recorder: RunRecorder
    runs: dict[tuple[str, str], _Rolling] = field(default_factory=dict)

    async def record(
        self,
        rule: Rule,
        tenant: str,
        scored: Sequence[tuple[bytes, CaseResult]],
        keys: Sequence[str] = (),
    ) -> None:
        """Append (serialized case, result) pairs to the run of the rule, the tenant and
        today, as one chunk (one commit), with the observations' queue ids as its keys in
        `scope(rule, tenant)` (see `recorded`)."""
        day = datetime.now(UTC).strftime("%Y-%m-%d")
        rolling = self.runs.get((rule.name, tenant))
        if rolling is not None and (rolling.day != day or rolling.rule != rule):
            await self._finish(rolling)
            rolling = None
        if rolling is None:
            rolling = await self._begin(rule, tenant, day)
            self.runs[(rule.name, tenant)] = rolling
        for i, (_, result) in enumerate(scored):
            result.index = rolling.count + i
        cases = cases_blob([case for case, _ in scored])
        results = wire.case_results_message(rule.plan.checks, [r for _, r in scored])
        chunk = Chunk(rolling.run.run_id, cases, results, len(scored), tuple(keys),
                      scope(rule.name, tenant))  # fmt: skip
        await self.recorder.append(chunk)
        rolling.count += len(scored)
        for _, result in scored:
            rolling.summary.add(result)

    async def recorded(self, rule: Rule, tenant: str, keys: Sequence[str]) -> set[str]:
        """Which of these observations (queue ids) a chunk of the rule and tenant holds,
        in any process's rolling run (one that died before marking them done)."""
        return await self.recorder.store.recorded(scope(rule.name, tenant), keys)

    async def forget(self, before: datetime) -> int:
        """Forget the observations recorded before `before` (past the dedupe window)."""
        return await self.recorder.store.forget_recorded(before)

    async def _begin(self, rule: Rule, tenant: str, day: str) -> _Rolling:
        suite = json.dumps(
            json_format.MessageToDict(rule_to_pb(rule), preserving_proto_field_name=True),
            sort_keys=True,
        )
        run = RunInfo(
            run_id=new_run_id(),
            name=f"observe/{rule.name}/{day}",
            source=RUN_SOURCE,
            tenant=tenant,
            labels={"observe_rule": rule.name, "observe_day": day},
            started_at=utc_now(),
            suite=suite,
            suite_sha256=hashlib.sha256(suite.encode()).hexdigest(),
            checks=rule.plan.names,
        )
        await self.recorder.begin(run)
        names, types = rule.plan.names, [c.type for c in rule.plan.checks]
        return _Rolling(run, day, SummaryBuilder(names, types), rule)

    async def _finish(self, rolling: _Rolling) -> None:
        rolling.run.status = RunStatus.COMPLETE
        rolling.run.ended_at = utc_now()
        rolling.run.summary = summary_json(rolling.summary.finish(None))
        await self.recorder.finish(rolling.run)

    async def close(self) -> None:
        """Finish every open run with its summary (a day's later scores open a new run)."""
        for rolling in list(self.runs.values()):
            with contextlib.suppress(Exception):
                await self._finish(rolling)
        self.runs.clear()
