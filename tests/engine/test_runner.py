"""The runner: every case exactly once, concurrency bound, timeouts, cancellation, summary."""

import asyncio
import time

import pytest
from scorewire.core.context import EMPTY_CONTEXT, CheckContext
from scorewire.core.model import ErrorCode, Output, Sample, Score
from scorewire.core.registry import CheckType, NoParams, Registry
from scorewire.engine.runner import Case, CaseResult, Plan, run_cases
from scorewire.engine.spec import CheckSpec, compile_check
from scorewire.engine.summary import Gate, SummaryBuilder


def _registry_with(name: str, fn) -> Registry:
    reg = Registry()
    reg.add(CheckType(name, "test", "test", NoParams, lambda _p: fn, is_async=True))
    return reg


def _plan(fn, name: str = "t", timeout: float = 10.0) -> Plan:
    reg = _registry_with(name, fn)
    return Plan([compile_check(CheckSpec(type=name), "checks[0]", registry=reg)], timeout)


def _cases(n: int) -> list[Case]:
    return [Case(Sample(f"s{i}"), Output(f"out {i}"), i) for i in range(n)]


async def test_sync_plan_yields_every_case_once_in_order() -> None:
    # The deterministic fast path scores inline and keeps input order.
    plan = Plan([compile_check(CheckSpec(type="length", params={"max_chars": 5}), "c")])
    got = [r async for r in run_cases(plan, _cases(1000), EMPTY_CONTEXT)]
    assert [r.index for r in got] == list(range(1000))
    assert sum(r.passed for r in got) == 10  # "out 0".."out 9" are 5 characters


async def test_async_plan_respects_the_concurrency_bound() -> None:
    # No more than `concurrency` cases are in flight at once.
    active = peak = 0

    async def fn(sample, output, ctx) -> Score:
        nonlocal active, peak
        active += 1
        peak = max(peak, active)
        await asyncio.sleep(0.005)
        active -= 1
        return Score(1.0, True, "ok")

    got = [r async for r in run_cases(_plan(fn), _cases(100), EMPTY_CONTEXT, concurrency=7)]
    assert sorted(r.index for r in got) == list(range(100))
    assert peak == 7


async def test_async_results_arrive_in_completion_order() -> None:
    # A slow first case does not hold back the fast ones.
    async def fn(sample, output, ctx) -> Score:
        await asyncio.sleep(0.3 if sample.id == "s0" else 0.001)
        return Score(1.0, True, "ok")

    got = [r.index async for r in run_cases(_plan(fn), _cases(5), EMPTY_CONTEXT)]
    assert got[-1] == 0 and sorted(got) == list(range(5))


async def test_per_check_timeout_is_an_error_score() -> None:
    # A check past its timeout errs with TIMEOUT; the run goes on.
    async def fn(sample, output, ctx) -> Score:
        await asyncio.sleep(5)
        return Score(1.0, True, "late")

    (r,) = [r async for r in run_cases(_plan(fn, timeout=0.05), _cases(1), EMPTY_CONTEXT)]
    assert r.scores[0].error is not None and r.scores[0].error.code == ErrorCode.TIMEOUT
    assert not r.passed


async def test_deadline_bounds_checks() -> None:
    # The context's deadline cuts a check short with DEADLINE_EXCEEDED.
    async def fn(sample, output, ctx) -> Score:
        await asyncio.sleep(5)
        return Score(1.0, True, "late")

    ctx = CheckContext(deadline=time.monotonic() + 0.05)
    (r,) = [r async for r in run_cases(_plan(fn), _cases(1), ctx)]
    assert r.scores[0].error is not None
    assert r.scores[0].error.code == ErrorCode.DEADLINE_EXCEEDED


async def test_closing_the_iterator_cancels_cases_in_flight() -> None:
    # A caller that goes away stops the work: every check in flight is cancelled, and
    # no case starts after the close. (The lane that finished s0 has already started
    # its next case by the time the caller reads s0: four are in flight, not three.)
    cancelled = started = 0

    async def fn(sample, output, ctx) -> Score:
        nonlocal cancelled, started
        started += 1
        try:
            await asyncio.sleep(0.01 if sample.id == "s0" else 10)
        except asyncio.CancelledError:
            cancelled += 1
            raise
        return Score(1.0, True, "ok")

    agen = run_cases(_plan(fn), _cases(10), EMPTY_CONTEXT, concurrency=4)
    first = await anext(agen)
    await agen.aclose()
    assert first.index == 0
    assert started == 5 and cancelled == 4
    await asyncio.sleep(0.02)
    assert started == 5


async def test_a_consumer_that_stops_reading_stops_the_work() -> None:
    # Lanes do not run ahead of the reader without bound: with 4 lanes and nobody
    # reading, at most 4 results wait and 4 more cases are in flight, of 100.
    started = 0

    async def fn(sample, output, ctx) -> Score:
        nonlocal started
        started += 1
        await asyncio.sleep(0)
        return Score(1.0, True, "ok")

    agen = run_cases(_plan(fn), _cases(100), EMPTY_CONTEXT, concurrency=4)
    await anext(agen)
    await asyncio.sleep(0.05)
    assert started <= 4 + 4 + 1
    got = 1 + len([r async for r in agen])
    assert got == 100 and started == 100


async def test_a_raising_check_is_an_error_not_a_crash() -> None:
    # A bug in a check becomes an error score for that case only.
    async def fn(sample, output, ctx) -> Score:
        if sample.id == "s1":
            raise RuntimeError("boom")
        return Score(1.0, True, "ok")

    got = {r.index: r async for r in run_cases(_plan(fn), _cases(3), EMPTY_CONTEXT)}
    assert got[0].passed and got[2].passed
    assert got[1].scores[0].error is not None
    assert got[1].scores[0].error.code == ErrorCode.CHECK_FAILED


def _summary(scores_per_case: list[list[Score]], gate: Gate):
    b = SummaryBuilder(["a", "b"], ["t", "t"])
    from scorewire.engine.runner import CaseResult

    for i, scores in enumerate(scores_per_case):
        b.add(CaseResult(i, f"s{i}", scores))
    return b.finish(gate)


def test_summary_counts_and_rates() -> None:
    # pass/fail/error per check and overall; errors count as 0 in the mean.
    ok, bad = Score(1.0, True), Score(0.5, False)
    err = Score.fail_with_error(ErrorCode.TIMEOUT, "t")
    s = _summary([[ok, ok], [ok, bad], [err, ok]], Gate(max_error_rate=0.5))
    assert (s.passed, s.failed, s.errored) == (4, 1, 1)
    assert s.cases_passed == 1 and s.pass_rate == pytest.approx(1 / 3)
    assert s.mean_score == pytest.approx(4.5 / 6)
    assert s.error_rate == pytest.approx(1 / 6)
    assert s.checks[0].errored == 1 and s.checks[1].failed == 1
    assert s.gate_passed


def test_default_gate_fails_on_any_error() -> None:
    # max_error_rate defaults to 0: a single error fails the gate.
    err = Score.fail_with_error(ErrorCode.TIMEOUT, "t")
    s = _summary([[Score(1.0, True), err]], Gate())
    assert not s.gate_passed and "max_error_rate" in s.gate_reasons[0]


@pytest.mark.parametrize(
    ("gate", "field"),
    [
        (Gate(min_pass_rate=0.9), "min_pass_rate"),
        (Gate(min_mean_score=0.99), "min_mean_score"),
        (Gate(max_cost=0.001), "max_cost"),
    ],
)
def test_each_gate_threshold_can_fail(gate: Gate, field: str) -> None:
    # Each threshold names itself in the reason when it is not met.
    costly = Score(1.0, True, cost_usd=0.01)
    s = _summary([[costly, Score(0.0, False)]], gate)
    assert not s.gate_passed and field in " ".join(s.gate_reasons)


def test_empty_run_fails_min_gates() -> None:
    # Nothing scored cannot meet a minimum pass rate.
    s = _summary([], Gate(min_pass_rate=0.0))
    assert not s.gate_passed


def test_summaries_of_chunks_merge_into_the_summary_of_the_whole() -> None:
    # A RunSuite's workers count their chunks; merged, the counts are the whole run's.
    def case(*scores: Score) -> CaseResult:
        return CaseResult(0, "s", list(scores))

    skipped = Score(0.0, False, "")
    skipped.skipped = True
    results = [
        case(Score(1.0, True, ""), Score(0.5, False, "", cost_usd=0.25)),
        case(Score.fail_with_error(ErrorCode.TIMEOUT, "slow"), skipped),
        case(Score(0.0, False, ""), Score(1.0, True, "", cached=True)),
    ]
    whole = SummaryBuilder(["a", "b"], ["contains", "judge"])
    for r in results:
        whole.add(r)
    merged = SummaryBuilder(["a", "b"], ["contains", "judge"])
    for chunk in (results[:1], results[1:]):
        part = SummaryBuilder(["a", "b"], ["contains", "judge"])
        for r in chunk:
            part.add(r)
        merged.merge(part)
    assert merged.finish() == whole.finish()
