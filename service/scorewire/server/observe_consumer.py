"""The observation consumer: takes queued observations, applies the rules, scores and records.

One task per server process. For each observation taken it weighs every rule in order:
the metadata filter, then the trace's sampling (`observe.rules`); a sampled observation
is scored with the rule's compiled plan on the event loop's scoring path (`score_case`:
deterministic checks inline, judge checks through the server's judge, its cache and
budgets) and recorded in the rule's rolling run for the UTC day. Only once every rule
is through is the observation marked done in the queue: a consumer that dies meanwhile
leaves it to be handed out again after the lease, and one already done is never scored
again. An observation whose scoring or recording fails is not marked done either: it is
tried again after the lease.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from google.protobuf import json_format
from scorewire.core.context import CheckContext
from scorewire.engine.runner import Case, CaseResult, score_case
from scorewire.engine.summary import SummaryBuilder
from scorewire.metrics.observe import ObserveMetrics
from scorewire.observe.queue import Delivery, ObservationQueue, QueueUnavailable
from scorewire.observe.rules import Rule
from scorewire.runs import Chunk, RunInfo, RunRecorder, RunStatus, new_run_id, utc_now
from scorewire.scoring import wire
from scorewire.scoring.recorded import cases_blob
from scorewire.server.observe_service import rule_to_pb
from scorewire.server.run_records import summary_json
from scorewire.v1 import observe_pb2 as opb

log = logging.getLogger("scorewire.observe")

BATCH = 64
"""Observations taken from the queue at once."""
IDLE_S = 0.1
"""Seconds the consumer waits before looking again at an empty queue."""
BACKOFF_S = 1.0
"""Seconds the consumer waits after the queue or the store failed."""
RUN_SOURCE = "Observe"


@dataclass(slots=True)
class _Rolling:
    """One rule's run for one UTC day, recorded by this process."""

    run: RunInfo
    day: str
    summary: SummaryBuilder
    count: int = 0


@dataclass(slots=True)
class RollingRuns:
    """The rolling runs of this process: one per rule and UTC day, opened on first score."""

    recorder: RunRecorder
    runs: dict[str, _Rolling] = field(default_factory=dict)

    async def record(self, rule: Rule, obs: opb.Observation, result: CaseResult) -> None:
        """Append one scored observation to the rule's run of today (after its commit)."""
        day = datetime.now(UTC).strftime("%Y-%m-%d")
        rolling = self.runs.get(rule.name)
        if rolling is not None and rolling.day != day:
            await self._finish(rolling)
            rolling = None
        if rolling is None:
            rolling = await self._begin(rule, day)
            self.runs[rule.name] = rolling
        result.index = rolling.count
        cases = cases_blob([wire.case_bytes(obs.sample, obs.output)])
        results = wire.case_results_message(rule.plan.checks, [result])
        await self.recorder.append(Chunk(rolling.run.run_id, cases, results, 1))
        rolling.count += 1
        rolling.summary.add(result)

    async def _begin(self, rule: Rule, day: str) -> _Rolling:
        suite = json.dumps(
            json_format.MessageToDict(rule_to_pb(rule), preserving_proto_field_name=True),
            sort_keys=True,
        )
        run = RunInfo(
            run_id=new_run_id(),
            name=f"observe/{rule.name}/{day}",
            source=RUN_SOURCE,
            tenant="",
            labels={"observe_rule": rule.name, "observe_day": day},
            started_at=utc_now(),
            suite=suite,
            suite_sha256=hashlib.sha256(suite.encode()).hexdigest(),
            checks=rule.plan.names,
        )
        await self.recorder.begin(run)
        return _Rolling(
            run, day, SummaryBuilder(rule.plan.names, [c.type for c in rule.plan.checks])
        )

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


class ObserveConsumer:
    """Takes observations from the queue and scores them by the rules (see the module)."""

    def __init__(
        self,
        queue: ObservationQueue,
        rules: Sequence[Rule],
        *,
        judge: Any = None,
        recorder: RunRecorder | None = None,
        metrics: ObserveMetrics | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._queue = queue
        self._rules = list(rules)
        self._judge = judge
        self._runs = RollingRuns(recorder) if recorder is not None else None
        self._metrics = metrics
        self._clock = clock
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        """Start the consumer task."""
        self._task = asyncio.create_task(self._loop(), name="scorewire-observe-consumer")

    async def close(self) -> None:
        """Stop taking observations (those taken and not done are handed out again), and
        finish the rolling runs."""
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        if self._runs is not None:
            await self._runs.close()

    async def _loop(self) -> None:
        while True:
            try:
                taken = await self.step()
            except QueueUnavailable as err:
                log.warning("%s; trying again in %.0f s", err, BACKOFF_S)
                await asyncio.sleep(BACKOFF_S)
                continue
            except Exception:
                log.exception("the observation consumer failed; trying again")
                await asyncio.sleep(BACKOFF_S)
                continue
            if taken == 0:
                await asyncio.sleep(IDLE_S)

    async def step(self) -> int:
        """Take one batch and process it; returns how many were taken."""
        taken = await self._queue.take(BATCH)
        if self._metrics is not None:
            self._metrics.depth.set(await self._queue.depth())
        finished: list[Delivery] = []
        for d in taken:
            if d.deliveries > 1 and await self._queue.processed(d):
                if self._metrics is not None:
                    self._metrics.redelivered.inc()
                finished.append(d)
                continue
            if await self._process(opb.Observation.FromString(d.payload)):
                finished.append(d)
        await self._queue.done(finished)
        return len(taken)

    async def _process(self, obs: opb.Observation) -> bool:
        """Weigh and score one observation by every rule; False when scoring or recording
        failed for a rule (the observation stays queued, to be tried again)."""
        meta = flatten(obs.metadata)
        trace = obs.trace.trace_id or obs.observation_id
        observed_at = obs.observed_at.ToNanoseconds() / 1e9
        chosen = [r for r in self._weigh(meta, trace)]
        if not chosen:
            return True
        wait = observed_at + max(r.settle_delay_s for r in chosen) - self._clock()
        if wait > 0:
            await asyncio.sleep(wait)
        if not obs.sample.id:
            obs.sample.id = obs.observation_id
        case = Case(wire.sample_from_pb(obs.sample), wire.output_from_pb(obs.output))
        ok = True
        for rule in chosen:
            ok = await self._score(rule, obs, case, observed_at) and ok
        return ok

    def _weigh(self, meta: dict[str, str], trace: str) -> list[Rule]:
        """The rules that sample the observation, each decision counted."""
        chosen = []
        m = self._metrics
        for rule in self._rules:
            if m is not None:
                m.observed.labels(rule.name).inc()
            if not rule.matches(meta):
                if m is not None:
                    m.skipped.labels(rule.name, "filter").inc()
            elif not rule.samples(trace):
                if m is not None:
                    m.skipped.labels(rule.name, "rate").inc()
            else:
                if m is not None:
                    m.sampled.labels(rule.name).inc()
                chosen.append(rule)
        return chosen

    async def _score(self, rule: Rule, obs: opb.Observation, case: Case, at: float) -> bool:
        m = self._metrics
        try:
            result = await score_case(rule.plan, case, CheckContext(judge=self._judge))
            if self._runs is not None:
                await self._runs.record(rule, obs, result)
        except Exception as err:  # the store down, a fault: tried again after the lease
            log.warning("observation %s, rule %s: %s", obs.observation_id, rule.name, err)
            if m is not None:
                m.errors.labels(rule.name).inc()
            return False
        if m is not None:
            m.scored.labels(rule.name, "pass" if result.passed else "fail").inc()
            if any(s.error is not None for s in result.scores):
                m.errors.labels(rule.name).inc()
            m.lag.labels(rule.name).observe(max(0.0, self._clock() - at))
        return True


def flatten(meta: opb.ObservationMetadata) -> dict[str, str]:
    """The metadata as rules filter it: route, model, tenant and `labels.<key>`."""
    out = {"route": meta.route, "model": meta.model, "tenant": meta.tenant}
    out.update({f"labels.{k}": v for k, v in meta.labels.items()})
    return out


@dataclass(slots=True)
class Observing:
    """What online evaluation needs from the server: the queue, the rules, the metrics."""

    queue: ObservationQueue
    rules: Sequence[Rule]
    metrics: ObserveMetrics | None = None
    consume: bool = True
    """Run a consumer in this process (False: Observe only queues; tests, benchmarks)."""
