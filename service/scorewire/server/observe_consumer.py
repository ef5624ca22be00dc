"""The observation consumer: takes queued observations, applies the rules, scores and records.

One task per server process takes a batch at a time. For each observation it weighs
every rule in order: the metadata filter, then the trace's sampling (`observe.rules`). A
sampled observation is scored, after the rule's settle delay, with the rule's compiled
plan on the event loop's scoring path (`score_case`: deterministic checks inline, judge
checks through the server's judge, its verdict cache and budgets); the batch's
observations are scored concurrently. Each rule's scores of the batch are then recorded
in its rolling run for the UTC day, one chunk (one commit) per rule.

Only then is an observation marked done in the queue: a consumer that dies meanwhile
leaves it to be handed out again after the lease, and one marked done is never scored
again. An observation whose scoring or recording failed is not marked done: it is tried
again after the lease, by every rule that samples it (those that had recorded it too:
the one case in which an observation is scored twice).
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
from scorewire.observe import evaluation_events  # hook: gen_ai.evaluation.result events
from scorewire.observe.queue import Delivery, ObservationQueue, QueueUnavailable
from scorewire.observe.rules import Rule
from scorewire.runs import Chunk, RunInfo, RunRecorder, RunStatus, new_run_id, utc_now
from scorewire.scoring import wire
from scorewire.scoring.recorded import cases_blob, summary_json
from scorewire.server.observe_service import rule_to_pb
from scorewire.v1 import observe_pb2 as opb

log = logging.getLogger("scorewire.observe")

BATCH = 256
"""Observations taken from the queue at once: each batch costs a take, a run-store commit
per rule and a done (two commits of the SQLite queue), so small batches spend their time
waiting for the disk (64: ~4,500 observations/s; 256: see bench/observe_bench.py)."""
DEPTH_EVERY_S = 1.0
"""Seconds between two readings of the queue's depth for its gauge."""
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
class _Scored:
    """One observation taken, and its results by the rules that sampled it."""

    delivery: Delivery
    obs: opb.Observation
    at: float
    """Its `observed_at`, in seconds since the epoch."""
    results: list[tuple[Rule, CaseResult]]


@dataclass(slots=True)
class RollingRuns:
    """The rolling runs of this process: one per rule and UTC day, opened on first score."""

    recorder: RunRecorder
    runs: dict[str, _Rolling] = field(default_factory=dict)

    async def record(
        self, rule: Rule, scored: Sequence[tuple[opb.Observation, CaseResult]]
    ) -> None:
        """Append scored observations to the rule's run of today, as one chunk (one commit)."""
        day = datetime.now(UTC).strftime("%Y-%m-%d")
        rolling = self.runs.get(rule.name)
        if rolling is not None and rolling.day != day:
            await self._finish(rolling)
            rolling = None
        if rolling is None:
            rolling = await self._begin(rule, day)
            self.runs[rule.name] = rolling
        for i, (_, result) in enumerate(scored):
            result.index = rolling.count + i
        cases = cases_blob([wire.case_bytes(o.sample, o.output) for o, _ in scored])
        results = wire.case_results_message(rule.plan.checks, [r for _, r in scored])
        await self.recorder.append(Chunk(rolling.run.run_id, cases, results, len(scored)))
        rolling.count += len(scored)
        for _, result in scored:
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
        self._depth_read = 0.0

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
        """Take one batch, score it (its observations concurrently), record it (one chunk
        per rule), mark done what is recorded; returns how many were taken."""
        taken = await self._queue.take(BATCH)
        now = time.monotonic()
        if self._metrics is not None and now - self._depth_read >= DEPTH_EVERY_S:
            self._depth_read = now
            self._metrics.depth.set(await self._queue.depth())
        finished: list[Delivery] = []
        weighed: list[_Scored] = []
        for d in taken:
            if d.deliveries > 1 and await self._queue.processed(d):
                if self._metrics is not None:
                    self._metrics.redelivered.inc()
                finished.append(d)
            else:
                weighed.append(self._weighed(d))
        # Only the sampled become tasks: at 10% the other 90% cost no more than weighing.
        scored = await asyncio.gather(*(self._score(w, chosen) for w, chosen in _sampled(weighed)))
        done = [w for w in weighed if not w.results] + [s for s in scored if s is not None]
        finished.extend(await self._record(done))
        await self._queue.done(finished)
        return len(taken)

    def _weighed(self, d: Delivery) -> _Scored:
        """One observation weighed by every rule: `results` holds the rules that sample
        it, each with no result yet."""
        obs = opb.Observation.FromString(d.payload)
        chosen = self._weigh(flatten(obs.metadata), obs.trace.trace_id or obs.observation_id)
        at = obs.observed_at.ToNanoseconds() / 1e9
        return _Scored(d, obs, at, [(r, _PENDING) for r in chosen])

    async def _score(self, w: _Scored, chosen: list[Rule]) -> _Scored | None:
        """Score one observation by the rules that sampled it, after their settle delay;
        None when scoring failed (it stays queued, tried again)."""
        obs, at, d = w.obs, w.at, w.delivery
        wait = at + max(r.settle_delay_s for r in chosen) - self._clock()
        if wait > 0:
            await asyncio.sleep(wait)
        if not obs.sample.id:
            obs.sample.id = obs.observation_id
        case = Case(wire.sample_from_pb(obs.sample), wire.output_from_pb(obs.output))
        ctx = CheckContext(judge=self._judge)
        try:
            results = await asyncio.gather(*(score_case(r.plan, case, ctx) for r in chosen))
        except Exception as err:  # a fault: tried again after the lease
            log.warning("observation %s: scoring failed: %s", obs.observation_id, err)
            for rule in chosen:
                self._count(self._metrics, "errors", rule)
            return None
        return _Scored(d, obs, at, list(zip(chosen, results, strict=True)))

    async def _record(self, batch: Sequence[_Scored]) -> list[Delivery]:
        """Record each rule's scores in one chunk; the deliveries whose every rule's scores
        were recorded (the others stay queued, tried again after the lease)."""
        by_rule: dict[str, list[tuple[_Scored, CaseResult]]] = {}
        rules = {r.name: r for r in self._rules}
        for item in batch:
            for rule, result in item.results:
                by_rule.setdefault(rule.name, []).append((item, result))
        failed: set[str] = set()
        m = self._metrics
        for name, items in by_rule.items():
            rule = rules[name]
            try:
                if self._runs is not None:
                    await self._runs.record(rule, [(i.obs, r) for i, r in items])
            except Exception as err:  # the store down: tried again after the lease
                log.warning("rule %s: %d scores not recorded: %s", name, len(items), err)
                failed.update(i.delivery.token for i, _ in items)
                for _ in items:
                    self._count(m, "errors", rule)
                continue
            # hook: one OTLP gen_ai.evaluation.result event per recorded score (a no-op
            # unless OTLP is on; never raises, never blocks): observe/evaluation_events.py
            evaluation_events.emit(rule, [(i.obs, r) for i, r in items])
            if m is None:
                continue
            now = self._clock()
            for item, result in items:
                m.scored.labels(name, "pass" if result.passed else "fail").inc()
                if any(s.error is not None for s in result.scores):
                    m.errors.labels(name).inc()
                cost = sum(s.cost_usd for s in result.scores)
                if cost:
                    m.cost.labels(name).inc(cost)
                m.lag.labels(name).observe(max(0.0, now - item.at))
        return [i.delivery for i in batch if i.delivery.token not in failed]

    @staticmethod
    def _count(m: ObserveMetrics | None, what: str, rule: Rule) -> None:
        if m is not None:
            getattr(m, what).labels(rule.name).inc()

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


_PENDING = CaseResult(0, "", [])
"""The result of a rule that sampled an observation not yet scored."""


def _sampled(weighed: Sequence[_Scored]) -> list[tuple[_Scored, list[Rule]]]:
    """The observations some rule sampled, with those rules."""
    return [(w, [r for r, _ in w.results]) for w in weighed if w.results]


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
