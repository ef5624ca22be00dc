"""Which check parameters are costly, and the self-check that refuses an unmetered one.

A parameter a request can make as large as it likes must declare what it costs (a
charge) or why it needs none (`Uncosted`); the rule is mechanical, so a new check is
held to it without anyone remembering to.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any, Literal

import pytest
from pydantic import BaseModel, Field
from scorewire.core.charges import charge_pattern, costly_params, require_metering, unmetered
from scorewire.core.model import Score
from scorewire.core.registry import CheckFn, Params, Registry, Uncosted, check_type


class Inner(Params):
    """A nested model with one free text."""

    note: str = ""


class Shapes(Params):
    """One parameter of each shape."""

    text: str = ""
    short_text: str = Field("", max_length=64)
    optional_text: str | None = None
    nonempty_text: Annotated[str, Field(min_length=1)] = "x"
    bounded_inside: Annotated[str, Field(max_length=8)] | None = None
    words: list[str] = Field(default_factory=list)
    few_words: list[str] = Field(default_factory=list, max_length=4)
    few_short_words: list[Annotated[str, Field(max_length=8)]] = Field(
        default_factory=list, max_length=4
    )
    few_kinds: list[Literal["a", "b"]] = Field(default_factory=list, max_length=4)
    kinds: list[Literal["a", "b"]] = Field(default_factory=list)
    mapping: dict[str, int] = Field(default_factory=dict)
    anything: Any = None
    number: float = 0.0
    count: int | None = None
    flag: bool = False
    mode: Literal["fast", "slow"] = "fast"
    fn: Callable[..., Any] | None = None
    schema_class: type[BaseModel] | None = None
    inner: Inner | None = None
    renamed: str = Field("", alias="schema")


def test_costly_parameters_follow_the_rule() -> None:
    # text, lists and mappings without max_length, items that are costly, any JSON value
    # and a nested model with a costly parameter; named as the caller writes them
    assert costly_params(Shapes) == [
        "text",
        "optional_text",  # a union is costly when one of its members is
        "nonempty_text",  # min_length bounds nothing
        "words",
        "few_words",  # four items, each of any length
        "kinds",  # bounded items, but as many as a request likes
        "mapping",
        "anything",
        "inner",
        "schema",
    ]


def _build(p: Any) -> CheckFn:
    def fn(sample: Any, output: Any, ctx: Any) -> Score:
        return Score(1.0, True, "ok")

    return fn


class PatternParams(Params):
    """A test-only check's parameters: one pattern, one bounded name."""

    pattern: str
    label: str = Field("", max_length=32)


def test_an_unmetered_costly_parameter_is_refused_naming_check_and_parameter() -> None:
    # the self-check refuses a type whose pattern declares no cost
    reg = Registry()
    check_type("test.unmetered", description="T.", family="custom", params=PatternParams,
               registry=reg)(_build)  # fmt: skip
    t = reg.get("test.unmetered")
    assert t is not None
    assert unmetered(t) == ["pattern"]
    with pytest.raises(ValueError) as info:
        require_metering(reg.types())
    assert str(info.value) == (
        "check type 'test.unmetered': parameter 'pattern' can be as large as a request "
        "makes it but declares no cost; give it a charge in costs=, or Uncosted(reason) "
        "saying why it needs none"
    )


@pytest.mark.parametrize(
    "cost", [charge_pattern, Uncosted("test-only")], ids=["a charge", "an Uncosted reason"]
)
def test_a_charge_or_an_uncosted_reason_declares_a_cost(cost: Any) -> None:
    # either declaration satisfies the self-check; only a charge is charged
    reg = Registry()
    check_type("test.metered", description="T.", family="custom", params=PatternParams,
               costs={"pattern": cost}, registry=reg)(_build)  # fmt: skip
    require_metering(reg.types())
    t = reg.get("test.metered")
    assert t is not None
    assert t.charges == ({} if isinstance(cost, Uncosted) else {"pattern": charge_pattern})


def test_a_cost_for_a_parameter_the_check_lacks_is_refused_at_definition() -> None:
    # a misspelt key would meter nothing, silently; the type is refused where it is written
    with pytest.raises(ValueError, match="declares a cost for 'patern', not a parameter"):
        check_type("test.typo", description="T.", family="custom", params=PatternParams,
                   costs={"patern": charge_pattern}, registry=Registry())(_build)  # fmt: skip
