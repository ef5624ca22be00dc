"""The consumer: takes observations, weighs every rule, scores the sampled, records runs.

Each test runs on both queue engines (SQLite and a real Redis) with a real server, a
SQLite run store, and reads the results back through the RunService and the metrics.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from scorewire.core.fairness import tenant_key
from scorewire.observe.rules import parse_rules, trace_fraction
from scorewire.runs.sqlite import SqliteRunStore
from scorewire.v1 import observe_pb2 as opb
from scorewire.v1 import runs_pb2 as rpb

from tests.observe.conftest import QueueOpener
from tests.observe.servers import ObserveServer, observation, observe_server
from tests.support.judge import judge_harness, level_reply
from tests.support.wait import wait_until_async

RULES = {
    "rules": [
        {"name": "paris", "compact": ["contains:Paris"], "filter": {"route": "/c"}},
        {"name": "other-route", "compact": ["contains:x"], "filter": {"route": "/other"}},
        {"name": "rare", "compact": ["contains:x"], "sampling_rate": 0.0001},
    ]
}


def _traces(n: int) -> list[str]:
    """Trace ids that the 0.0001 rate does not sample (pinned, not left to chance)."""
    out, k = [], 0
    while len(out) < n:
        t = f"{k:032x}"
        if trace_fraction(t) >= 0.0001:
            out.append(t)
        k += 1
    return out


async def _results(srv: ObserveServer, rule: str) -> list[rpb.RunCaseResult]:
    runs = (await srv.runs.ListRuns(rpb.ListRunsRequest(labels={"observe_rule": rule}))).runs
    out: list[rpb.RunCaseResult] = []
    for run in runs:
        got = await srv.runs.ListRunResults(rpb.ListRunResultsRequest(run_id=run.run_id))
        out.extend(got.results)
    return out


async def _count(srv: ObserveServer, rule: str, n: int) -> list[rpb.RunCaseResult] | None:
    got = await _results(srv, rule)
    assert len(got) <= n
    return got if len(got) == n else None


async def test_sampled_observations_are_scored_into_the_rules_rolling_run(
    open_queue: QueueOpener, tmp_path: Path
) -> None:
    # every decision counted; the scores land in a run named by rule and UTC day
    store = await SqliteRunStore.open(str(tmp_path / "runs.db"))
    texts = ["Paris it is", "Lyon", "Paris again"]
    traces = _traces(3)
    batch = [observation(t, trace=tr) for t, tr in zip(texts, traces, strict=True)]
    async with observe_server(await open_queue(), parse_rules(RULES), runs=store) as srv:
        await srv.observe.Observe(opb.ObserveRequest(observations=batch))
        scored = await wait_until_async(lambda: _count(srv, "paris", 3), "three scored")
        assert srv.metric("scorewire_observe_observed_total", rule="paris") == 3
        assert srv.metric("scorewire_observe_scored_total", rule="paris", outcome="pass") == 2
        assert srv.metric("scorewire_observe_scored_total", rule="paris", outcome="fail") == 1
        skipped = "scorewire_observe_skipped_total"
        assert srv.metric(skipped, rule="other-route", reason="filter") == 3
        assert srv.metric(skipped, rule="rare", reason="rate") == 3
        assert srv.metric("scorewire_observe_lag_seconds_count", rule="paris") == 3
        assert await _results(srv, "rare") == [] and await _results(srv, "other-route") == []
        (run,) = (await srv.runs.ListRuns(rpb.ListRunsRequest(name=""))).runs
        assert run.name.startswith("observe/paris/") and run.source == "Observe"
    outputs = sorted(r.case.output.text for r in scored)
    assert outputs == sorted(texts)
    assert sorted(r.result.passed for r in scored) == [False, True, True]


async def test_an_observation_a_dead_consumer_held_is_scored_once_after_its_lease(
    open_queue: QueueOpener, tmp_path: Path
) -> None:
    # at least once delivery, no double scoring: taken and never finished (the replica was
    # killed), it is handed out again after the lease and scored exactly once
    store = await SqliteRunStore.open(str(tmp_path / "runs.db"))
    queue = await open_queue(lease_s=0.5)
    obs = observation("Paris", trace=_traces(1)[0], oid="held")
    obs.observed_at.GetCurrentTime()
    await queue.put([("held", obs.SerializeToString())])
    assert [d.id for d in await queue.take(10)] == ["held"]  # the consumer that dies
    async with observe_server(queue, parse_rules(RULES), runs=store) as srv:
        await wait_until_async(lambda: _results(srv, "paris"), "the redelivered one scored")
        await wait_until_async(lambda: _depth_zero(queue), "the queue emptied")
        assert len(await _results(srv, "paris")) == 1
        assert srv.metric("scorewire_observe_scored_total", rule="paris", outcome="pass") == 1


class _DiesBeforeDone:
    """The real queue, except that the first `done` fails: the consumer recorded its
    batch and then died before marking it done (a SIGKILL between the two writes)."""

    def __init__(self, queue: Any) -> None:
        self._queue = queue
        self.failed = 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self._queue, name)

    async def done(self, deliveries: Any) -> None:
        if deliveries and not self.failed:
            self.failed += 1
            raise RuntimeError("killed between recording and marking done")
        await self._queue.done(deliveries)


async def test_an_observation_recorded_before_its_consumer_died_is_not_recorded_again(
    open_queue: QueueOpener, tmp_path: Path
) -> None:
    # Recorded, then the consumer died before marking it done: handed out again after the
    # lease, the rule finds it recorded (its key was written with the chunk) and neither
    # scores nor records it again (before, it was scored and recorded twice)
    store = await SqliteRunStore.open(str(tmp_path / "runs.db"))
    queue = _DiesBeforeDone(await open_queue(lease_s=0.5))
    obs = observation("Paris", trace=_traces(1)[0], oid="once")
    async with observe_server(queue, parse_rules(RULES), runs=store) as srv:  # type: ignore[arg-type]
        await srv.observe.Observe(opb.ObserveRequest(observations=[obs]))
        await wait_until_async(lambda: _depth_zero(queue), "the redelivered one done")
        assert queue.failed == 1
        assert len(await _results(srv, "paris")) == 1
        assert srv.metric("scorewire_observe_scored_total", rule="paris", outcome="pass") == 1
        assert srv.metric("scorewire_observe_redelivered_total") == 1


async def _depth_zero(queue) -> bool:
    return await queue.depth() == 0


async def test_a_settle_delay_holds_the_score_back(open_queue: QueueOpener, tmp_path: Path) -> None:
    # late spans settle: the score comes no sooner than the delay after observed_at
    store = await SqliteRunStore.open(str(tmp_path / "runs.db"))
    rules = parse_rules(
        {"rules": [{"name": "late", "compact": ["contains:P"], "settle_delay_s": 1}]}
    )
    async with observe_server(await open_queue(), rules, runs=store) as srv:
        await srv.observe.Observe(opb.ObserveRequest(observations=[observation("P")]))
        await wait_until_async(lambda: _count(srv, "late", 1), "the late score")
        lag = srv.metric("scorewire_observe_lag_seconds_sum", rule="late")
    assert lag >= 1.0


async def test_a_judge_rule_calls_the_judge_once_per_sampled_observation_and_counts_cost(
    open_queue: QueueOpener, tmp_path: Path
) -> None:
    # LLM-as-judge checks score through the server's judge; what they cost is counted per rule
    store = await SqliteRunStore.open(str(tmp_path / "runs.db"))
    rules = parse_rules(
        {"rules": [{"name": "polite", "checks": [{"type": "judge", "rubric": "Is it polite?"}]}]}
    )
    async with judge_harness(openai_default=level_reply(5)) as h:
        batch = [observation(f"Thank you, {n}.") for n in ("Ann", "Bo")]
        async with observe_server(await open_queue(), rules, runs=store, judge=h.service) as srv:
            await srv.observe.Observe(opb.ObserveRequest(observations=batch))
            scored = await wait_until_async(lambda: _count(srv, "polite", 2), "two judged")
            cost = srv.metric("scorewire_observe_cost_usd_total", rule="polite")
        assert h.openai.calls == 2
    assert all(r.result.passed for r in scored)
    assert cost > 0


async def test_observations_are_scored_by_the_executor_in_their_tenants_share(
    open_queue: QueueOpener, tmp_path: Path
) -> None:
    # deterministic checks go to the scoring workers (not the serving loop), each job in
    # the share of the tenant that sent the observation, as every other entry point's
    store = await SqliteRunStore.open(str(tmp_path / "runs.db"))
    batch = [observation("Paris", trace=t) for t in _traces(3)]
    for o in batch:
        o.metadata.tenant = "acme"
    async with observe_server(await open_queue(), parse_rules(RULES), runs=store) as srv:
        pool = srv.running.service.executor.pool
        assert pool is not None
        await srv.observe.Observe(opb.ObserveRequest(observations=batch))
        scored = await wait_until_async(lambda: _count(srv, "paris", 3), "three scored")
        jobs = dict(pool.by_tenant)
    assert jobs.get(tenant_key("acme"), 0) >= 1
    assert set(jobs) == {tenant_key("acme")}
    assert all(r.result.passed for r in scored)
    assert [s.reason for s in scored[0].result.scores] != [""]  # reasons kept from the worker
