"""Comparisons and the prompt × provider matrix, computed from two runs' cases."""

from __future__ import annotations

from scorewire.viewer import CaseResult, CheckStats, RunDetail, RunInfo, ScoreResult
from scorewire.viewer.run_views import case_keys, compare_runs, prompt_matrix


def _score(name: str, passed: bool, *, error: bool = False, skipped: bool = False) -> ScoreResult:
    return ScoreResult(
        name, "contains", 1.0 if passed else 0.0, passed, "why",
        skipped=skipped, error=("TIMEOUT", "slow") if error else None,
    )  # fmt: skip


def _case(i: int, sid: str, passed: bool, output: str = "out", **kw: bool) -> CaseResult:
    return CaseResult(i, sid, {"q": i}, None, output, passed, [_score("c", passed, **kw)])


def _detail(rate: float, checks: list[CheckStats]) -> RunDetail:
    info = RunInfo("r", "r", None, "checkllm", 4, rate, 0.0, 0.0, True)
    return RunDetail(info, checks, [])


def _stats(name: str, passed: int, failed: int) -> CheckStats:
    return CheckStats(name, "contains", passed, failed, 0, 0, passed / (passed + failed))


def test_regressions_come_first_matched_by_sample_id_not_position() -> None:
    # the compared run lists its cases in another order: matching is by id
    base = [_case(0, "a", True), _case(1, "b", False), _case(2, "c", True), _case(3, "d", True)]
    run = [
        _case(0, "d", True),
        _case(1, "c", True, "other"),
        _case(2, "b", True),
        _case(3, "a", False),
    ]
    cmp = compare_runs(_detail(0.75, []), base, _detail(0.75, []), run)
    assert [(c.kind, c.key) for c in cmp.changes] == [
        ("regressed", "a"),
        ("improved", "b"),
        ("changed", "c"),
    ]
    assert cmp.unchanged == 1


def test_an_error_after_a_pass_is_a_regression() -> None:
    # an error is never a pass: passed -> errored regresses
    cmp = compare_runs(
        _detail(1, []), [_case(0, "a", True)], _detail(0, []), [_case(0, "a", False, error=True)]
    )
    assert [c.kind for c in cmp.changes] == ["regressed"]
    assert cmp.changes[0].case is not None and cmp.changes[0].case.outcome == "errored"


def test_added_and_removed_cases_are_listed_after_the_changes() -> None:
    cmp = compare_runs(
        _detail(1, []),
        [_case(0, "gone", True), _case(1, "a", True)],
        _detail(1, []),
        [_case(0, "new", True), _case(1, "a", False)],
    )
    assert [(c.kind, c.key) for c in cmp.changes] == [
        ("regressed", "a"),
        ("added", "new"),
        ("removed", "gone"),
    ]


def test_repeats_of_one_sample_id_are_matched_in_order() -> None:
    # --repeat gives one id several cases: the n-th matches the n-th
    keys = case_keys([_case(0, "a", True), _case(1, "a", False), _case(2, "", True)])
    assert list(keys) == ["a", "a#2", "#2"]


def test_check_deltas_put_the_largest_drop_first() -> None:
    cmp = compare_runs(
        _detail(1, [_stats("up", 1, 1), _stats("down", 2, 0), _stats("same", 1, 1)]),
        [],
        _detail(
            1, [_stats("up", 2, 0), _stats("down", 0, 2), _stats("same", 1, 1), _stats("new", 1, 0)]
        ),
        [],
    )
    assert [(d.name, d.delta) for d in cmp.checks] == [
        ("down", -1.0),
        ("same", 0.0),
        ("new", None),
        ("up", 0.5),
    ]


def test_matrix_rows_are_prompts_by_index_and_columns_providers() -> None:
    # the rendered prompt differs per test; the sample id names the prompt's index
    cases = [
        CaseResult(
            0, "t0/p0/x", {}, None, "o", True, [_score("c", True)], provider="x", prompt="A: 1"
        ),
        CaseResult(
            1, "t0/p1/x", {}, None, "o", False, [_score("c", False)], provider="x", prompt="B: 1"
        ),
        CaseResult(
            2,
            "t1/p1/x",
            {},
            None,
            "o",
            True,
            [_score("c", True), _score("d", True, skipped=True)],
            provider="x",
            prompt="B: 2",
        ),
    ]
    matrix = prompt_matrix(cases)
    assert matrix is not None
    assert matrix.prompts == ["p0", "p1"] and matrix.providers == ["x"]
    assert matrix.examples == {"p0": "A: 1", "p1": "B: 1"}
    cell = matrix.cells[("p1", "x")]
    assert (cell.cases.passed, cell.cases.total) == (1, 2)
    # a skipped score is not counted in its assertion's rate
    assert {n: (t.passed, t.total) for n, t in cell.checks.items()} == {"c": (1, 2)}


def test_no_matrix_without_prompts() -> None:
    # evalstone cases carry no prompt or provider
    assert prompt_matrix([_case(0, "a", True)]) is None
