"""The runs list's pass-rate trends: one per run name, and one per rule for online
evaluation's rolling runs (a run a day, each named for its day)."""

from __future__ import annotations

from datetime import UTC, datetime

from scorewire.viewer.trends import pass_rate_trends
from scorewire.viewer.view_model import RunInfo


def run(run_id: str, name: str, day: int, rate: float, **labels: str) -> RunInfo:
    return RunInfo(
        id=run_id,
        name=name,
        started_at=datetime(2026, 12, day, tzinfo=UTC),
        suite_format="evalstone",
        cases=10,
        pass_rate=rate,
        error_rate=0.0,
        cost_usd=0.0,
        gate_passed=True,
        labels=labels,
    )


def test_rolling_runs_of_a_rule_make_one_trend_over_days() -> None:
    runs = [
        run("a", "observe/polite/2026-12-02", 2, 0.9, observe_rule="polite"),
        run("b", "observe/polite/2026-12-03", 3, 0.7, observe_rule="polite"),
        run("c", "observe/polite/2026-12-04", 4, 0.8, observe_rule="polite"),
        run("d", "nightly", 3, 0.5),
        run("e", "nightly", 4, 0.6),
        run("f", "observe/other/2026-12-04", 4, 1.0, observe_rule="other"),  # one day: none
    ]
    trends = {t.name: t for t in pass_rate_trends(runs)}
    assert set(trends) == {"observe/polite", "nightly"}
    assert [p.run.id for p in trends["observe/polite"].points] == ["a", "b", "c"]


def test_a_run_named_like_a_rolling_run_without_its_label_keeps_its_name() -> None:
    runs = [run("a", "observe/x/1", 2, 0.5), run("b", "observe/x/2", 3, 0.5)]
    assert pass_rate_trends(runs) == []
