"""The collectors on their own: how judge changes and score batches become series."""

from __future__ import annotations

from typing import Any

import pytest
from prometheus_client import CollectorRegistry, generate_latest
from scorewire.core.model import ErrorCode, Score
from scorewire.engine.runner import CaseResult, Plan
from scorewire.engine.spec import CheckSpec, compile_checks
from scorewire.judge import JudgeStats
from scorewire.metrics.judge_calls import MAX_MODELS, JudgeMetrics
from scorewire.metrics.runs import RunMetrics

from tests.metrics.helpers import Scrape

OPENAI = {"backend": "openai", "model": "gpt-4o-mini"}


def scrape(registry: CollectorRegistry) -> Scrape:
    return Scrape.parse(generate_latest(registry).decode())


def judge_metrics() -> tuple[JudgeMetrics, JudgeStats, CollectorRegistry]:
    registry = CollectorRegistry()
    metrics = JudgeMetrics(registry)
    stats = JudgeStats()
    metrics.watch(type("Judge", (), {"stats": stats, "server_budget": None})())
    return metrics, stats, registry


@pytest.mark.parametrize(
    ("changes", "series", "value"),
    [
        # an answered, priced call: its cost, and one ok request
        (
            [("answered_calls", 1, OPENAI), ("cost_usd", 0.25, OPENAI)],
            ("scorewire_judge_cost_usd_total", {"model": "gpt-4o-mini"}),
            0.25,
        ),
        (
            [("answered_calls", 1, OPENAI), ("cost_usd", 0.25, OPENAI)],
            ("scorewire_judge_requests_total", {**OPENAI, "outcome": "ok"}),
            1,
        ),
        # money alone is no request (a call failing on impossible usage is charged its
        # ceiling, and is an error request) (changed deliberately: money counted requests)
        (
            [("cost_usd", 0.25, OPENAI), ("call_failures", 1, OPENAI)],
            ("scorewire_judge_requests_total", {**OPENAI, "outcome": "ok"}),
            0,
        ),
        # a call charged its ceiling: in the cost, and counted apart
        (
            [("cost_usd", 0.5, OPENAI), ("ceiling_charges", 1, OPENAI)],
            ("scorewire_judge_ceiling_charged_requests_total", {"model": "gpt-4o-mini"}),
            1,
        ),
        # an answer that was no verdict moves the request from ok to invalid_verdict
        (
            [("answered_calls", 1, OPENAI), ("invalid_verdicts", 1, OPENAI)],
            ("scorewire_judge_requests_total", {**OPENAI, "outcome": "ok"}),
            0,
        ),
        (
            [("answered_calls", 1, OPENAI), ("invalid_verdicts", 1, OPENAI)],
            ("scorewire_judge_requests_total", {**OPENAI, "outcome": "invalid_verdict"}),
            1,
        ),
        # an unpriced call: counted apart
        (
            [("unpriced_calls", 1, OPENAI)],
            ("scorewire_judge_unpriced_requests_total", {"model": "gpt-4o-mini"}),
            1,
        ),
        # a failure after retries is an error request
        (
            [("call_failures", 1, OPENAI)],
            ("scorewire_judge_requests_total", {**OPENAI, "outcome": "error"}),
            1,
        ),
        # tokens by direction
        (
            [("input_tokens", 120, OPENAI)],
            ("scorewire_judge_tokens_total", {"direction": "input"}),
            120,
        ),
        (
            [("output_tokens", 7, OPENAI)],
            ("scorewire_judge_tokens_total", {"direction": "output"}),
            7,
        ),
        # in flight goes up and back down
        (
            [("in_flight", 1, OPENAI), ("in_flight", 1, OPENAI), ("in_flight", -1, OPENAI)],
            ("scorewire_judge_requests_in_flight", {"backend": "openai"}),
            1,
        ),
        (
            [("retries", 1, OPENAI), ("retries", 1, OPENAI)],
            ("scorewire_judge_retries_total", OPENAI),
            2,
        ),
        # cache results; unlabelled changes from the cache
        (
            [("cache_hits", 1, {}), ("cache_hits", 1, {})],
            ("scorewire_judge_cache_lookups_total", {"result": "hit"}),
            2,
        ),
        ([("cache_misses", 1, {})], ("scorewire_judge_cache_lookups_total", {"result": "miss"}), 1),
        (
            [("cache_bypasses", 1, {})],
            ("scorewire_judge_cache_lookups_total", {"result": "bypass"}),
            1,
        ),
        (
            [("saved_usd", 0.5, {}), ("saved_usd", 0.25, {})],
            ("scorewire_judge_saved_usd_total", {}),
            0.75,
        ),
        ([("shared_calls", 1, {})], ("scorewire_judge_shared_requests_total", {}), 1),
        ([("budget_refusals", 1, {})], ("scorewire_judge_budget_refusals_total", {}), 1),
        # a change the exporter does not know is ignored, not an error
        ([("brand_new_counter", 1, {})], ("scorewire_judge_saved_usd_total", {}), 0),
        # a change without labels lands under "unknown"
        (
            [("call_failures", 1, {})],
            ("scorewire_judge_requests_total", {"backend": "unknown", "outcome": "error"}),
            1,
        ),
    ],
)
def test_judge_changes_become_series(
    changes: list[tuple[str, float, dict[str, str]]],
    series: tuple[str, dict[str, str]],
    value: float,
) -> None:
    metrics, _, registry = judge_metrics()
    for name, amount, labels in changes:
        metrics.on_change(name, amount, labels)
    name, labels = series
    assert scrape(registry).value(name, **labels) == pytest.approx(value)


def test_watch_subscribes_to_the_judge_stats() -> None:
    # Changes made through JudgeStats reach the series.
    _, stats, registry = judge_metrics()
    stats.add("cost_usd", 0.5, **OPENAI)
    stats.add("cache_hits")
    s = scrape(registry)
    assert s.value("scorewire_judge_cost_usd_total", model="gpt-4o-mini") == 0.5
    assert s.value("scorewire_judge_cache_lookups_total", result="hit") == 1


def test_the_model_label_is_capped() -> None:
    # Request parameters can name any model: past MAX_MODELS the rest count as "other".
    metrics, _, registry = judge_metrics()
    for i in range(MAX_MODELS + 5):
        metrics.on_change("cost_usd", 1.0, {"backend": "openai", "model": f"m{i}"})
    s = scrape(registry)
    models = {lb["model"] for lb, _ in s.matching("scorewire_judge_cost_usd_total")}
    assert len(models) == MAX_MODELS + 1
    assert s.value("scorewire_judge_cost_usd_total", model="other") == 5
    # A model already seen keeps its own series.
    metrics.on_change("cost_usd", 1.0, {"backend": "openai", "model": "m0"})
    assert scrape(registry).value("scorewire_judge_cost_usd_total", model="m0") == 2


class _Budget:
    def __init__(self, limit: float, spent: float, remaining: float | None = None) -> None:
        self.limit_usd = limit
        self.spent_usd = spent
        if remaining is not None:
            self.remaining_usd = lambda: remaining


@pytest.mark.parametrize(
    ("budget", "expected"),
    [
        # no server budget: no budget series at all
        (None, None),
        (_Budget(None, 0.0), None),  # type: ignore[arg-type]
        # limit minus spent
        (_Budget(10.0, 2.5), 7.5),
        # never below zero (concurrent calls may overshoot)
        (_Budget(10.0, 12.0), 0.0),
        # a budget that knows its period's remainder is asked for it
        (_Budget(10.0, 9.0, remaining=10.0), 10.0),
    ],
)
def test_budget_gauges(budget: Any, expected: float | None) -> None:
    registry = CollectorRegistry()
    metrics = JudgeMetrics(registry)
    metrics.watch(type("Judge", (), {"stats": JudgeStats(), "server_budget": budget})())
    s = scrape(registry)
    if expected is None:
        assert not s.has("scorewire_judge_budget_remaining_usd")
        assert not s.has("scorewire_judge_budget_limit_usd")
    else:
        assert s.value("scorewire_judge_budget_remaining_usd") == expected
        assert s.value("scorewire_judge_budget_limit_usd") == budget.limit_usd


def test_watching_no_judge_is_a_no_op() -> None:
    # A server without a judge still exports the zeroed judge counters.
    registry = CollectorRegistry()
    JudgeMetrics(registry).watch(None)
    assert scrape(registry).value("scorewire_judge_cache_lookups_total", result="hit") == 0


# --- RunMetrics ------------------------------------------------------------------------------


def plan(*types: str) -> Plan:
    specs = {
        "contains": CheckSpec(type="contains", params={"needles": ["a"]}),
        "length": CheckSpec(type="length", params={"max_chars": 5}),
    }
    return Plan(compile_checks([specs[t] for t in types]))


def result(*scores: Score) -> CaseResult:
    return CaseResult(0, "s", list(scores))


def timed(passed: bool, ms: float, error: bool = False) -> Score:
    s = (
        Score.fail_with_error(ErrorCode.INVALID_OUTPUT, "bad")
        if error
        else Score(float(passed), passed, "")
    )
    s.latency_ms = ms
    return s


def test_a_batch_is_counted_by_type_and_outcome() -> None:
    # Two checks of one type in a plan add up under that type; outcomes are exclusive.
    registry = CollectorRegistry()
    runs = RunMetrics(registry)
    p = plan("contains", "contains", "length")
    runs.observe_results(
        p,
        [
            result(timed(True, 1), timed(False, 1), timed(True, 1)),
            result(timed(True, 1), timed(False, 1, error=True), timed(False, 1)),
        ],
    )
    s = scrape(registry)
    assert s.value("scorewire_checks_total", type="contains", outcome="pass") == 2
    assert s.value("scorewire_checks_total", type="contains", outcome="fail") == 1
    assert s.value("scorewire_checks_total", type="contains", outcome="error") == 1
    assert s.value("scorewire_checks_total", type="length", outcome="pass") == 1
    assert s.value("scorewire_checks_total", type="length", outcome="fail") == 1
    assert s.value("scorewire_check_duration_seconds_count", type="contains") == 4


def test_error_scores_are_counted_by_error_code() -> None:
    # Errors carry their code; a code ErrorCode does not list (a custom check's) is OTHER.
    registry = CollectorRegistry()
    runs = RunMetrics(registry)
    custom = Score.fail_with_error("MY_OWN_CODE_42", "custom")
    judge = Score.fail_with_error(ErrorCode.JUDGE_ERROR, "no key")
    runs.observe_results(
        plan("contains", "length"),
        [
            result(timed(False, 1, error=True), judge),
            result(timed(False, 1, error=True), custom),
            result(timed(True, 1), timed(True, 1)),
        ],
    )
    s = scrape(registry)
    assert s.value("scorewire_check_errors_total", type="contains", code="INVALID_OUTPUT") == 2
    assert s.value("scorewire_check_errors_total", type="length", code="JUDGE_ERROR") == 1
    assert s.value("scorewire_check_errors_total", type="length", code="OTHER") == 1
    assert not s.matching("scorewire_check_errors_total", code="MY_OWN_CODE_42")
    # the codes add up to the error outcome
    assert s.value("scorewire_checks_total", type="length", outcome="error") == 2


@pytest.mark.parametrize(
    ("ms", "le", "inside"),
    [
        # a duration equal to a bound falls in that bucket (le is "less or equal")
        (1.0, "0.001", True),
        (1.0001, "0.001", False),
        (1.0001, "0.0025", True),
        # beyond the last bound: only +Inf
        (500_000.0, "120.0", False),
        (500_000.0, "+Inf", True),
        # zero (a check too fast to measure) is in the first bucket
        (0.0, "0.0001", True),
    ],
)
def test_duration_buckets_are_cumulative_and_inclusive(ms: float, le: str, inside: bool) -> None:
    registry = CollectorRegistry()
    runs = RunMetrics(registry)
    runs.observe_results(plan("length"), [result(timed(True, ms))])
    s = scrape(registry)
    assert s.value("scorewire_check_duration_seconds_bucket", type="length", le=le) == (
        1 if inside else 0
    )
    assert s.value("scorewire_check_duration_seconds_sum", type="length") == pytest.approx(
        ms / 1000
    )


def test_an_empty_batch_or_plan_counts_nothing() -> None:
    registry = CollectorRegistry()
    runs = RunMetrics(registry)
    runs.observe_results(plan("length"), [])
    runs.observe_results(Plan([]), [result()])
    assert not scrape(registry).has("scorewire_checks_total")


def test_a_batch_tallied_elsewhere_counts_as_the_batch_itself() -> None:
    # Scoring workers tally their chunk and the server adds the tally: the exported
    # series must equal those of handing the server every result.
    from scorewire.metrics.runs import tally

    p = plan("contains", "length")
    batch = [
        result(timed(True, 0.05), timed(False, 3)),
        result(timed(False, 0.2, error=True), timed(True, 700)),
        result(timed(True, 12), timed(False, 0.01, error=True)),
    ]
    direct, counted = CollectorRegistry(), CollectorRegistry()
    RunMetrics(direct).observe_results(p, batch)
    runs = RunMetrics(counted)
    runs.observe_tally(p, tally(2, batch[:2], runs.bounds_ms))
    runs.observe_tally(p, tally(2, batch[2:], runs.bounds_ms))
    want, got = (generate_latest(r).decode().splitlines() for r in (direct, counted))
    assert len(want) == len(got)
    for w, g in zip(want, got, strict=True):
        if "_created{" in w:  # when each registry was made
            continue
        if "_sum{" in w:  # seconds added per batch: equal up to rounding
            (wk, wv), (gk, gv) = w.rsplit(" ", 1), g.rsplit(" ", 1)
            assert wk == gk and float(wv) == pytest.approx(float(gv), rel=1e-12)
        else:
            assert w == g
