"""Trajectory checks: tool_called, tool_order, max_steps, no_repeated_calls, finished."""

from __future__ import annotations

from typing import Any

import pytest
from scorewire.core.model import ErrorCode, Output

from tests.support.checks import load_errors, score


def call(tool: str, **args: Any) -> dict[str, Any]:
    return {"tool": tool, "args": args}


def with_steps(steps: Any, key: str = "steps") -> Output:
    return Output("", {key: steps, "answer": "done"})


STEP_CHECKS = [
    ("trajectory.tool_called", {"name": "search"}),
    ("trajectory.tool_order", {"before": "search", "after": "answer"}),
    ("trajectory.max_steps", {"n": 3}),
    ("trajectory.no_repeated_calls", {}),
]

# --- rules shared by the four step-reading checks ----------------------------------------


@pytest.mark.parametrize(("check", "params"), STEP_CHECKS)
def test_no_trajectory_at_all_is_an_error(check: str, params: dict[str, Any]) -> None:
    # A broken recorder must trip max_error_rate, not pass or fail quietly.
    for output in (Output("text only"), Output("", {"answer": "x"}), Output("", [1, 2])):
        got = score(check, params, output=output)
        assert got.error is not None and got.error.code == ErrorCode.MISSING_TRAJECTORY
        assert not got.passed


@pytest.mark.parametrize(("check", "params"), STEP_CHECKS)
def test_steps_are_read_from_metadata_when_the_value_has_none(
    check: str, params: dict[str, Any]
) -> None:
    got = score(check, params, output=Output("", None, {"steps": [call("search"), call("answer")]}))
    assert got.error is None and got.passed, got.reason


@pytest.mark.parametrize(("check", "params"), STEP_CHECKS)
def test_steps_key_is_configurable(check: str, params: dict[str, Any]) -> None:
    output = with_steps([call("search"), call("answer")], key="trace")
    assert score(check, {**params, "steps": "trace"}, output=output).passed
    got = score(check, params, output=output)
    assert got.error is not None and got.error.code == ErrorCode.MISSING_TRAJECTORY


@pytest.mark.parametrize(("check", "params"), STEP_CHECKS)
@pytest.mark.parametrize(
    ("steps", "fragment"),
    [
        # a step that is not an object
        (["search"], "step 0"),
        # a step without a tool
        ([call("search"), {"args": {}}], "step 1"),
        # a tool name that is not a string
        ([{"tool": 3}], "step 0"),
        # a steps value that is not a list
        ({"tool": "search"}, "not a list"),
    ],
)
def test_malformed_trajectory_is_an_error(
    check: str, params: dict[str, Any], steps: Any, fragment: str
) -> None:
    got = score(check, params, output=with_steps(steps))
    assert got.error is not None and got.error.code == ErrorCode.INVALID_OUTPUT
    assert fragment in got.error.message


EMPTY = [
    # an empty trajectory is judged: it fails tool_called with the default min_times
    ("trajectory.tool_called", {"name": "search"}, False),
    # ... and passes it with min_times: 0
    ("trajectory.tool_called", {"name": "search", "min_times": 0}, True),
    # it passes tool_order, max_steps and no_repeated_calls
    ("trajectory.tool_order", {"before": "a", "after": "b"}, True),
    ("trajectory.max_steps", {"n": 0}, True),
    ("trajectory.no_repeated_calls", {}, True),
]


@pytest.mark.parametrize(("check", "params", "passed"), EMPTY)
def test_empty_trajectory_is_judged_normally(
    check: str, params: dict[str, Any], passed: bool
) -> None:
    got = score(check, params, output=with_steps([]))
    assert got.error is None and got.passed is passed


# --- trajectory.tool_called ------------------------------------------------------------

TOOL_CALLED = [
    # called once, min_times default 1
    ({"name": "search"}, [call("search", q="a")], True),
    # not called
    ({"name": "search"}, [call("fetch")], False),
    # min_times
    ({"name": "search", "min_times": 2}, [call("search"), call("search")], True),
    ({"name": "search", "min_times": 3}, [call("search"), call("search")], False),
    # max_times
    ({"name": "search", "max_times": 1}, [call("search"), call("search")], False),
    ({"name": "search", "min_times": 0, "max_times": 0}, [call("fetch")], True),
    # args: a subset of the call's arguments must match
    ({"name": "search", "args": {"q": "paris"}}, [call("search", q="paris", n=5)], True),
    ({"name": "search", "args": {"q": "paris"}}, [call("search", q="rome")], False),
    ({"name": "search", "args": {"q": "paris", "n": 5}}, [call("search", q="paris")], False),
    # args values compare with JSON equality: 5 == 5.0, true != 1
    ({"name": "search", "args": {"n": 5}}, [call("search", n=5.0)], True),
    ({"name": "search", "args": {"flag": True}}, [call("search", flag=1)], False),
    # only matching calls count toward min_times
    (
        {"name": "search", "args": {"q": "a"}, "min_times": 2},
        [call("search", q="a"), call("search", q="b")],
        False,
    ),
    # args recorded as a JSON string (OpenAI-style) are decoded
    ({"name": "search", "args": {"q": "x"}}, [{"tool": "search", "args": '{"q": "x"}'}], True),
    # a step without args has no arguments
    ({"name": "search", "args": {"q": "x"}}, [{"tool": "search"}], False),
]


@pytest.mark.parametrize(("params", "steps", "passed"), TOOL_CALLED)
def test_tool_called(params: dict[str, Any], steps: list[Any], passed: bool) -> None:
    got = score("trajectory.tool_called", params, output=with_steps(steps))
    assert got.error is None and got.passed is passed, got.reason


@pytest.mark.parametrize(
    ("params", "reason"),
    [
        ({"name": "search"}, "search was called 2 times (expected at least 1)"),
        ({"name": "search", "max_times": 1}, "search was called 2 times (expected exactly 1)"),
        (
            {"name": "search", "min_times": 3, "max_times": 5},
            "search was called 2 times (expected between 3 and 5)",
        ),
        (
            {"name": "search", "args": {"q": 1}},
            "search (with matching args) was called 0 times (expected at least 1)",
        ),
    ],
)
def test_tool_called_reason_gives_count_and_bounds(params: dict[str, Any], reason: str) -> None:
    steps = with_steps([call("search"), call("search")])
    got = score("trajectory.tool_called", params, output=steps)
    assert got.reason == reason


def test_tool_called_with_a_python_predicate() -> None:
    # In the Python API, args may be a predicate over the call's arguments.
    params = {"name": "search", "args": lambda args: args.get("n", 0) > 3}
    assert score("trajectory.tool_called", params, output=with_steps([call("search", n=5)])).passed
    failed = score("trajectory.tool_called", params, output=with_steps([call("search", n=1)]))
    assert failed.error is None and not failed.passed


def test_tool_called_predicate_that_raises_is_an_error() -> None:
    params = {"name": "search", "args": lambda args: args["missing"]}
    got = score("trajectory.tool_called", params, output=with_steps([call("search")]))
    assert got.error is not None and got.error.code == ErrorCode.CHECK_FAILED
    assert "KeyError" in got.error.message


@pytest.mark.parametrize(
    ("params", "field", "fragment"),
    [
        # max below min
        ({"name": "s", "min_times": 2, "max_times": 1}, "checks[0].params.max_times", "below"),
        # negative counts
        ({"name": "s", "min_times": -1}, "checks[0].params.min_times", "greater than or equal"),
        # over the wire args cannot be a function
        ({"name": "s", "args": "lambda a: True"}, "checks[0].params.args", "Python API"),
        # the name is required and non-empty
        ({}, "checks[0].params.name", "required"),
        ({"name": ""}, "checks[0].params.name", "at least 1"),
        # 1.5 times
        ({"name": "s", "min_times": 1.5}, "checks[0].params.min_times", "integer"),
    ],
)
def test_tool_called_load_errors(params: dict[str, Any], field: str, fragment: str) -> None:
    assert fragment in load_errors("trajectory.tool_called", params)[field]


# --- trajectory.tool_order -------------------------------------------------------------

TOOL_ORDER = [
    # before then after
    ([call("search"), call("answer")], True),
    # after without any before
    ([call("answer"), call("search")], False),
    # every after must be preceded; one earlier before covers later afters
    ([call("search"), call("answer"), call("answer")], True),
    # an after before the first before fails even if another after follows it
    ([call("answer"), call("search"), call("answer")], False),
    # no after call at all: nothing out of order
    ([call("search")], True),
    ([call("other")], True),
]


@pytest.mark.parametrize(("steps", "passed"), TOOL_ORDER)
def test_tool_order(steps: list[Any], passed: bool) -> None:
    params = {"before": "search", "after": "answer"}
    got = score("trajectory.tool_order", params, output=with_steps(steps))
    assert got.error is None and got.passed is passed, got.reason


def test_tool_order_same_tool_is_a_load_error() -> None:
    errors = load_errors("trajectory.tool_order", {"before": "a", "after": "a"})
    assert "same tool" in errors["checks[0].params.after"]


# --- trajectory.max_steps --------------------------------------------------------------

MAX_STEPS = [
    # at most n steps, inclusive
    (2, [call("a"), call("b")], True),
    (2, [call("a"), call("b"), call("c")], False),
    (0, [call("a")], False),
]


@pytest.mark.parametrize(("n", "steps", "passed"), MAX_STEPS)
def test_max_steps(n: int, steps: list[Any], passed: bool) -> None:
    got = score("trajectory.max_steps", {"n": n}, output=with_steps(steps))
    assert got.error is None and got.passed is passed


@pytest.mark.parametrize(
    ("params", "fragment"),
    [({}, "required"), ({"n": -1}, "greater than or equal"), ({"n": 2.5}, "integer")],
)
def test_max_steps_load_errors(params: dict[str, Any], fragment: str) -> None:
    assert fragment in load_errors("trajectory.max_steps", params)["checks[0].params.n"]


# --- trajectory.no_repeated_calls ------------------------------------------------------

NO_REPEATS = [
    # distinct calls
    ({}, [call("search", q="a"), call("search", q="b")], True),
    # an identical (tool, args) call repeated back to back
    ({}, [call("search", q="a"), call("search", q="a")], False),
    # repeats anywhere count, not only consecutive ones
    ({}, [call("search", q="a"), call("fetch"), call("search", q="a")], False),
    # identity ignores key order and compares numbers by value
    ({}, [call("s", a=1, b=2), {"tool": "s", "args": {"b": 2.0, "a": 1}}], False),
    # true is not 1
    ({}, [call("s", x=True), call("s", x=1)], True),
    # same args, different tools
    ({}, [call("a", q=1), call("b", q=1)], True),
    # a missing args object equals an empty one
    ({}, [{"tool": "ping"}, {"tool": "ping", "args": {}}], False),
    # max_repeats: 1 allows one repeat (two identical calls) but not two
    ({"max_repeats": 1}, [call("s"), call("s")], True),
    ({"max_repeats": 1}, [call("s"), call("s"), call("s")], False),
]


@pytest.mark.parametrize(("params", "steps", "passed"), NO_REPEATS)
def test_no_repeated_calls(params: dict[str, Any], steps: list[Any], passed: bool) -> None:
    got = score("trajectory.no_repeated_calls", params, output=with_steps(steps))
    assert got.error is None and got.passed is passed, got.reason


def test_no_repeated_calls_reason_names_the_tool_and_count() -> None:
    steps = [call("search", q="a")] * 3
    got = score("trajectory.no_repeated_calls", {}, output=with_steps(steps))
    assert got.reason == "an identical search call occurs 3 times (at most 1 allowed)"


# --- trajectory.finished ---------------------------------------------------------------

FINISHED = [
    # a non-empty answer
    ({}, Output("", {"answer": "Paris"}), True),
    # an empty or blank answer
    ({}, Output("", {"answer": ""}), False),
    ({}, Output("", {"answer": "  \n"}), False),
    ({}, Output("", {"answer": None}), False),
    ({}, Output("", {"answer": []}), False),
    # 0 and false are answers
    ({}, Output("", {"answer": 0}), True),
    ({}, Output("", {"answer": False}), True),
    # a missing answer is a plain fail, not an error
    ({}, Output("", {"steps": []}), False),
    # the text is parsed as JSON when there is no value
    ({}, Output('{"answer": "yes"}'), True),
    # text that is not JSON is a plain fail
    ({}, Output("plain prose"), False),
    # path: elsewhere, dotted or a pointer
    ({"path": "result.final"}, Output("", {"result": {"final": "ok"}}), True),
    ({"path": "/result/final"}, Output("", {"result": {"final": ""}}), False),
]


@pytest.mark.parametrize(("params", "output", "passed"), FINISHED)
def test_finished(params: dict[str, Any], output: Output, passed: bool) -> None:
    # finished reads no steps: a missing trajectory is never an error here
    got = score("trajectory.finished", params, output=output)
    assert got.error is None and got.passed is passed, got.reason


def test_finished_bad_path_is_a_load_error() -> None:
    errors = load_errors("trajectory.finished", {"path": ""})
    assert "empty" in errors["checks[0].params.path"]
