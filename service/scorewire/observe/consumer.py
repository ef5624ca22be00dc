"""The observation consumer: takes queued observations, applies the rules, scores and records.

One task per server process takes a batch at a time. For each observation it weighs
every rule in order: the metadata filter, then the trace's sampling (`observe.rules`).
After the longest settle delay of the rules that sampled them, the batch's sampled
observations are scored by the scoring layer's executor, as every other entry point's
cases are (`scoring.executor`): one batch per rule and tenant, in the tenant's share of
the scoring workers (`core.fairness`), a plan with judge checks in this process through
the server's judge, its verdict cache and budgets. Each rule's scores of the batch are
then recorded in its rolling run of the tenant and UTC day (`observe.rolling`), one
chunk (one commit) per rule and tenant. Judge calls are held in the rule's and the
tenant's cost caps (`observe.costs`): an observation whose call a cap refused is not
recorded but skipped, counted with reason `cost_cap`, and done.

Only then is an observation marked done in the queue: a consumer that dies meanwhile
leaves it to be handed out again after the lease, and one marked done is never scored
again. An observation whose scoring or recording failed is not marked done: it is tried
again after the lease. Each recorded chunk keys its observations (their queue ids) in
the run store, in the chunk's own transaction, per rule and tenant; an observation
handed out again is first looked up there, and a rule that recorded it already neither
scores nor records it again. So a consumer killed between recording and marking done
costs nothing twice. The keys are forgotten after `observe_dedupe_s`, the window in
which the queue also refuses the same observation sent again.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from scorewire.core.context import CheckContext
from scorewire.core.fairness import UNTENANTED, current_caller, tenant_key
from scorewire.core.model import ErrorCode
from scorewire.engine.runner import CaseResult
from scorewire.metrics.observe import ObserveMetrics
from scorewire.observe import evaluation_events
from scorewire.observe.costs import CostCaps
from scorewire.observe.queue import Delivery, ObservationQueue, QueueUnavailable
from scorewire.observe.rolling import RollingRuns
from scorewire.observe.rules import Rule
from scorewire.observe.ruleset import RuleSet
from scorewire.observe.wire import flatten, rule_source
from scorewire.runs import RunRecorder
from scorewire.scoring import wire
from scorewire.scoring.executor import Executor
from scorewire.scoring.limits import check_extras
from scorewire.scoring.plan_source import PlanSource
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
FORGET_EVERY_S = 300.0
"""Seconds between two deletions of recorded keys past the dedupe window."""
BACKOFF_S = 1.0
"""Seconds the consumer waits after the queue or the store failed."""
_CAPPED = frozenset((ErrorCode.BUDGET_EXHAUSTED,))
"""A judge call its caps refused: the observation is skipped for the rule (`cost_cap`)."""


@dataclass(slots=True)
class _Taken:
    """One observation taken, the rules that sampled it, and their results."""

    delivery: Delivery
    obs: opb.Observation
    at: float
    """Its `observed_at`, in seconds since the epoch."""
    chosen: list[Rule]
    case: bytes = b""
    """The observation as a serialized `Case` (made once it is sampled)."""
    results: dict[str, CaseResult] = field(default_factory=dict)
    failed: bool = False

    @property
    def tenant(self) -> str:
        """The tenant that sent it (the server writes the caller's into the metadata)."""
        return self.obs.metadata.tenant


@dataclass(slots=True)
class Observing:
    """What online evaluation needs from the server: the queue, the rules, the metrics."""

    queue: ObservationQueue
    rules: Sequence[Rule]
    metrics: ObserveMetrics | None = None
    consume: bool = True
    """Run a consumer in this process (False: Observe only queues; tests, benchmarks)."""
    managed: bool = True
    """Rules may be created over gRPC, stored beside the queue (False: the file's only)."""


class ObserveConsumer:
    """Takes observations from the queue and scores them by the rules (see the module)."""

    def __init__(
        self,
        queue: ObservationQueue,
        rules: RuleSet,
        executor: Executor,
        *,
        judge: Any = None,
        recorder: RunRecorder | None = None,
        metrics: ObserveMetrics | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._queue = queue
        self._rules = rules
        self._sources: dict[str, tuple[Rule, bytes, PlanSource]] = {}
        self._executor = executor
        self._judge = judge
        self._extras = check_extras(executor.settings)
        self._dedupe_s = executor.settings.observe_dedupe_s
        self._caps = CostCaps(executor.settings, judge)
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
        forgot = 0.0
        while True:
            if self._runs is not None and time.monotonic() - forgot >= FORGET_EVERY_S:
                forgot = time.monotonic()
                before = datetime.now(UTC) - timedelta(seconds=self._dedupe_s)
                with contextlib.suppress(Exception):  # the store down: next time
                    await self._runs.forget(before)
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
        """Take one batch, score it (one executor batch per rule and tenant), record it
        (one chunk per rule and tenant), mark done what is recorded; returns how many
        were taken."""
        rules = await self._rules.refresh()
        taken = await self._queue.take(BATCH)
        now = time.monotonic()
        if self._metrics is not None and now - self._depth_read >= DEPTH_EVERY_S:
            self._depth_read = now
            self._metrics.depth.set(await self._queue.depth())
        finished: list[Delivery] = []
        weighed: list[_Taken] = []
        for d in taken:
            if d.deliveries > 1 and await self._queue.processed(d):
                if self._metrics is not None:
                    self._metrics.redelivered.inc()
                finished.append(d)
            else:
                weighed.append(self._weighed(d, rules))
        groups = await self._not_recorded(_groups(weighed))
        if groups:
            await self._settle([t for t in weighed if t.chosen])
            await asyncio.gather(*(self._score(rule, items) for rule, items in groups))
            for rule, items in groups:
                await self._record(rule, items)
        finished.extend(t.delivery for t in weighed if not t.failed)
        await self._queue.done(finished)
        return len(taken)

    async def _not_recorded(
        self, groups: list[tuple[Rule, list[_Taken]]]
    ) -> list[tuple[Rule, list[_Taken]]]:
        """The groups without the redelivered observations a rule recorded already (its
        consumer died before marking them done): neither scored nor recorded again. If
        the run store cannot say, they stay queued (tried again after the lease)."""
        if self._runs is None:
            return groups
        out = []
        for rule, items in groups:
            again = [t.delivery.id for t in items if t.delivery.deliveries > 1]
            if again:
                try:
                    seen = await self._runs.recorded(rule, items[0].tenant, again)
                except Exception as err:
                    log.warning("rule %s: cannot tell what was recorded: %s", rule.name, err)
                    for t in items:
                        t.failed = True
                    continue
                if seen and self._metrics is not None:
                    self._metrics.redelivered.inc(len(seen))
                items = [t for t in items if t.delivery.id not in seen]
            if items:
                out.append((rule, items))
        return out

    def _weighed(self, d: Delivery, rules: Sequence[Rule]) -> _Taken:
        """One observation weighed by every rule."""
        obs = opb.Observation.FromString(d.payload)
        trace = obs.trace.trace_id or obs.observation_id
        chosen = self._weigh(rules, flatten(obs.metadata), trace)
        taken = _Taken(d, obs, obs.observed_at.ToNanoseconds() / 1e9, chosen)
        if chosen:
            if not obs.sample.id:
                obs.sample.id = obs.observation_id
            taken.case = wire.case_bytes(obs.sample, obs.output)
        return taken

    async def _settle(self, sampled: Sequence[_Taken]) -> None:
        """Wait until every sampled observation's settle delay has passed."""
        wait = max(t.at + max(r.settle_delay_s for r in t.chosen) for t in sampled)
        wait -= self._clock()
        if wait > 0:
            await asyncio.sleep(wait)

    async def _score(self, rule: Rule, items: Sequence[_Taken]) -> None:
        """Score one rule's observations of one tenant through the executor, in that
        tenant's share of the workers; a fault leaves them queued (tried again)."""
        tenant = items[0].tenant
        current_caller.set(tenant_key(tenant) if tenant else UNTENANTED)  # this task's own
        budget = self._caps.budget(rule, tenant)
        if budget is not None and budget.exhausted:  # spent: no call could be made
            self._count("skipped", rule, len(items), "cost_cap")
            return
        ctx = CheckContext(
            judge=self._judge, extras=self._extras, tenant=tenant or None, budget=budget
        )
        key, source = self._source(rule)
        try:
            results = await self._executor.score_results(key, source, [t.case for t in items], ctx)
        except Exception as err:  # a fault: tried again after the lease
            log.warning("rule %s: %d observations not scored: %s", rule.name, len(items), err)
            for t in items:
                t.failed = True
                self._count("errors", rule)
            return
        for t, result in zip(items, results, strict=True):
            if any(s.error is not None and s.error.code in _CAPPED for s in result.scores):
                self._count("skipped", rule, 1, "cost_cap")  # refused before any call
            else:
                t.results[rule.name] = result

    async def _record(self, rule: Rule, items: Sequence[_Taken]) -> None:
        """Record the rule's scores of one tenant in one chunk; on a failure the
        observations stay queued (tried again after the lease)."""
        scored = [t for t in items if rule.name in t.results]
        if not scored:
            return
        pairs = [(t.case, t.results[rule.name]) for t in scored]
        try:
            if self._runs is not None:
                keys = [t.delivery.id for t in scored]
                await self._runs.record(rule, scored[0].tenant, pairs, keys)
        except Exception as err:  # the store down: tried again after the lease
            log.warning("rule %s: %d scores not recorded: %s", rule.name, len(scored), err)
            for t in scored:
                t.failed = True
                self._count("errors", rule)
            return
        # One OTLP gen_ai.evaluation.result event per recorded score (a no-op unless OTLP
        # is on; never raises, never blocks): observe/evaluation_events.py
        evaluation_events.emit(rule, [(t.obs, t.results[rule.name]) for t in scored])
        m = self._metrics
        if m is None:
            return
        now = self._clock()
        for t, (_, result) in zip(scored, pairs, strict=True):
            m.scored.labels(rule.name, "pass" if result.passed else "fail").inc()
            if any(s.error is not None for s in result.scores):
                m.errors.labels(rule.name).inc()
            cost = sum(s.cost_usd for s in result.scores)
            if cost:
                m.cost.labels(rule.name).inc(cost)
            m.lag.labels(rule.name).observe(max(0.0, now - t.at))

    def _count(self, what: str, rule: Rule, n: int = 1, *labels: str) -> None:
        if self._metrics is not None:
            getattr(self._metrics, what).labels(rule.name, *labels).inc(n)

    def _source(self, rule: Rule) -> tuple[bytes, PlanSource]:
        """The rule's plan source and key, made once per rule (and again once it changed)."""
        known = self._sources.get(rule.name)
        if known is None or known[0] is not rule:
            known = (rule, *rule_source(rule))
            self._sources[rule.name] = known
        return known[1], known[2]

    def _weigh(self, rules: Sequence[Rule], meta: dict[str, str], trace: str) -> list[Rule]:
        """The rules that sample the observation, each decision counted."""
        chosen = []
        m = self._metrics
        for rule in rules:
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


def _groups(weighed: Sequence[_Taken]) -> list[tuple[Rule, list[_Taken]]]:
    """The sampled observations by rule and tenant, in rule order."""
    by: dict[tuple[str, str], tuple[Rule, list[_Taken]]] = {}
    for t in weighed:
        for rule in t.chosen:
            by.setdefault((rule.name, t.tenant), (rule, []))[1].append(t)
    return list(by.values())
