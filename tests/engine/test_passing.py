"""Value → passed, once, in the engine: a family declares a threshold or a negating flag,
its checks only measure, and `engine.passing` decides."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import Field
from scorewire.core.context import EMPTY_CONTEXT, CheckContext
from scorewire.core.model import ErrorCode, Measurement, Output, Sample, Score
from scorewire.core.registry import CheckFn, Params, Registry, ThresholdRule, check_type
from scorewire.engine.execute import run_check, run_check_sync
from scorewire.engine.spec import CheckSpec, compile_check


def _phrase(value: float, passed: bool, threshold: float) -> str:
    return f" ({'≥' if passed else '<'} {threshold:g})"


class ValueParams(Params):
    """Parameters of the toy value check."""

    threshold: float | None = Field(None, ge=0, le=1, description="Passing value.")


class FlagParams(Params):
    """Parameters of the toy negatable check."""

    wanted: bool = Field(True, description="False inverts the result.")


def _registry() -> Registry:
    """Toy types: the output text is the value ('err' is an error, 'own' the check's own
    verdict), and a negatable check that passes on 'yes'."""
    reg = Registry()

    def measure(sample: Sample, output: Output, ctx: CheckContext) -> Score:
        if output.text == "err":
            return Score.fail_with_error(ErrorCode.INVALID_OUTPUT, "unreadable")
        if output.text == "own":
            return Measurement(0.3, "v 0.3", ": why", passed=True, reason="v 0.3 (own rule)")
        return Measurement(float(output.text), f"v {output.text}", ": why")

    def build_value(p: ValueParams) -> CheckFn:
        return measure

    async def measure_async(sample: Sample, output: Output, ctx: CheckContext) -> Score:
        return measure(sample, output, ctx)

    def build_value_async(p: ValueParams) -> CheckFn:
        return measure_async

    def says_yes(sample: Sample, output: Output, ctx: CheckContext) -> Score:
        if output.text == "err":
            return Score.fail_with_error(ErrorCode.INVALID_OUTPUT, "unreadable")
        ok = output.text == "yes"
        return Score(float(ok), ok, "it says yes" if ok else "it does not say yes")

    def build_flag(p: FlagParams) -> CheckFn:
        return says_yes

    rule = ThresholdRule(0.5, _phrase)
    for name, build in (("value", build_value), ("value_async", build_value_async)):
        check_type(
            name,
            description="A value.",
            family="custom",
            params=ValueParams,
            threshold=rule,
            registry=reg,
        )(build)
    check_type(
        "own",
        description="A value.",
        family="custom",
        params=ValueParams,
        threshold=ThresholdRule(None, _phrase),
        registry=reg,
    )(build_value)
    check_type(
        "flag",
        description="Yes.",
        family="custom",
        params=FlagParams,
        negated_by="wanted",
        registry=reg,
    )(build_flag)
    return reg


REG = _registry()


def run(type_: str, params: dict[str, Any], text: str) -> Score:
    cc = compile_check(CheckSpec(type=type_, params=params), "checks[0]", registry=REG)
    return run_check_sync(cc, Sample(), Output(text), EMPTY_CONTEXT)


@pytest.mark.parametrize(
    ("params", "text", "passed", "reason"),
    [
        ({}, "0.5", True, "v 0.5 (≥ 0.5): why"),  # the rule's default, inclusive
        ({}, "0.49", False, "v 0.49 (< 0.5): why"),  # just under the default
        ({"threshold": 0.2}, "0.3", True, "v 0.3 (≥ 0.2): why"),  # the spec's own wins
        ({"threshold": None}, "0.4", False, "v 0.4 (< 0.5): why"),  # null means the default
        ({"threshold": 0.0}, "0", True, "v 0 (≥ 0): why"),  # threshold 0 passes everything
        ({"threshold": 0.2}, "own", True, "v 0.3 (≥ 0.2): why"),  # overrides the own verdict
        ({"threshold": 0.9}, "own", False, "v 0.3 (< 0.9): why"),  # in both directions
    ],
)
def test_the_engine_passes_a_measurement_at_the_threshold(
    params: dict[str, Any], text: str, passed: bool, reason: str
) -> None:
    got = run("value", params, text)
    assert (got.passed, got.reason, got.error) == (passed, reason, None)


async def test_an_async_check_gets_the_same_rule() -> None:
    # judge-backed and custom checks are coroutines; the rule wraps them alike
    cc = compile_check(CheckSpec(type="value_async", params={"threshold": 0.7}), "c", registry=REG)
    assert cc.fn_is_async
    got = await run_check(cc, Sample(), Output("0.6"), EMPTY_CONTEXT)
    assert (got.passed, got.reason) == (False, "v 0.6 (< 0.7): why")


def test_without_a_threshold_in_force_the_check_s_own_verdict_stands() -> None:
    # a rule with no default (judge and pass_level) leaves passed and reason as returned
    got = run("own", {}, "own")
    assert (got.value, got.passed, got.reason) == (0.3, True, "v 0.3 (own rule)")
    assert run("own", {"threshold": 0.5}, "own").passed is False


@pytest.mark.parametrize("params", [{}, {"threshold": 0.0}])
def test_a_threshold_never_passes_an_error(params: dict[str, Any]) -> None:
    # an error score is left alone, even at threshold 0
    got = run("value", params, "err")
    assert got.error is not None and (got.value, got.passed) == (0.0, False)


@pytest.mark.parametrize(
    ("params", "text", "value", "passed", "reason"),
    [
        ({}, "yes", 1.0, True, "it says yes"),  # the flag's default: as measured
        ({"wanted": True}, "no", 0.0, False, "it does not say yes"),
        ({"wanted": False}, "yes", 0.0, False, "it says yes but must not"),  # inverted
        ({"wanted": False}, "no", 1.0, True, "it does not say yes, as required"),
    ],
)
def test_a_negating_flag_inverts_value_pass_and_reason(
    params: dict[str, Any], text: str, value: float, passed: bool, reason: str
) -> None:
    got = run("flag", params, text)
    assert (got.value, got.passed, got.reason) == (value, passed, reason)


def test_negation_never_turns_an_error_into_a_pass() -> None:
    got = run("flag", {"wanted": False}, "err")
    assert got.error is not None and (got.value, got.passed) == (0.0, False)


def test_a_check_with_no_rule_in_force_runs_its_own_function() -> None:
    # deterministic checks with default flags keep the hot path free of a wrapper
    spec = CheckSpec(type="flag", params={})
    cc = compile_check(spec, "c", registry=REG)
    assert cc.fn.__name__ == "says_yes"
    negated = compile_check(CheckSpec(type="flag", params={"wanted": False}), "c", registry=REG)
    assert negated.fn.__name__ != "says_yes"


def test_regex_must_match_false_is_the_engine_s_negation() -> None:
    # the built-in regex declares must_match as its negating flag; the wording is kept
    cc = compile_check(CheckSpec(type="regex", params={"pattern": "x", "must_match": False}), "c")
    assert cc.check_type.negated_by == "must_match"
    hit = run_check_sync(cc, Sample(), Output("x"), EMPTY_CONTEXT)
    miss = run_check_sync(cc, Sample(), Output("y"), EMPTY_CONTEXT)
    assert (hit.value, hit.passed, hit.reason) == (0.0, False, "the pattern matches but must not")
    assert (miss.value, miss.passed, miss.reason) == (
        1.0,
        True,
        "the pattern does not match, as required",
    )


class NoThreshold(Params):
    """No threshold parameter."""


class FalseFlag(Params):
    """A flag that defaults to false."""

    wanted: bool = Field(False, description="Defaults the wrong way.")


@pytest.mark.parametrize(
    ("params", "kw", "message"),
    [
        (NoThreshold, {"threshold": ThresholdRule(0.5, _phrase)}, "no parameter"),
        (FalseFlag, {"negated_by": "wanted"}, "defaulting to true"),
        (NoThreshold, {"negated_by": "wanted"}, "defaulting to true"),
    ],
)
def test_the_registry_refuses_an_incomplete_pass_rule(
    params: type[Params], kw: dict[str, Any], message: str
) -> None:
    # a rule without its parameter (or a flag defaulting to false) fails at import
    reg = Registry()
    register = check_type("t", description="T.", family="custom", params=params, registry=reg, **kw)
    with pytest.raises(ValueError, match=message):
        register(lambda p: None)  # type: ignore[arg-type,return-value]


def test_the_registry_refuses_a_threshold_default_that_disagrees() -> None:
    # the parameter's default and the rule's default are one number
    class Half(Params):
        """A threshold parameter defaulting to 0.5."""

        threshold: float = Field(0.5, description="Passing value.")

    register = check_type(
        "t",
        description="T.",
        family="custom",
        params=Half,
        threshold=ThresholdRule(0.8, _phrase),
        registry=Registry(),
    )
    with pytest.raises(ValueError, match=r"defaults to 0\.5, the rule to 0\.8"):
        register(lambda p: None)  # type: ignore[arg-type,return-value]
