"""Check modifiers (seed 003): conditional checks, examples as a self-test, the extractor."""

import pytest
from scorewire.core.context import EMPTY_CONTEXT, CheckContext, Extraction
from scorewire.core.errors import SpecError
from scorewire.core.model import ErrorCode, Output, Sample
from scorewire.engine.execute import run_check, run_check_sync
from scorewire.engine.spec import CheckSpec, Example, compile_check


def contains(needle: str, **extra) -> CheckSpec:
    return CheckSpec(type="contains", params={"needles": [needle]}, **extra)


# The truth table of seed 003: condition x base -> test result.
@pytest.mark.parametrize(
    ("text", "cond_passes", "base_passes", "expected"),
    [
        ("Law X and Addendum Y", True, True, True),  # Pass, Pass -> Pass
        ("Law X only", True, False, False),  # Pass, Fail -> Fail
        ("Addendum Y only", False, True, True),  # Fail, Pass -> Pass
        ("neither", False, False, True),  # Fail, Fail -> Pass
    ],
)
def test_conditional_truth_table(text, cond_passes, base_passes, expected) -> None:
    cc = compile_check(contains("Addendum Y", when=contains("Law X")), "checks[0]")
    score = run_check_sync(cc, Sample(), Output(text), EMPTY_CONTEXT)
    assert score.error is None, score
    assert score.passed is expected
    if not cond_passes:
        # The reason says the condition did not apply.
        assert "condition not met" in score.reason


def test_condition_that_errors_makes_the_check_error() -> None:
    # An erroring predicate is an error, never a silent pass.
    cond = CheckSpec(type="exact")  # no reference anywhere -> MISSING_REFERENCE
    cc = compile_check(contains("Y", when=cond), "checks[0]")
    score = run_check_sync(cc, Sample(), Output("Y"), EMPTY_CONTEXT)
    assert score.error is not None and score.error.code == ErrorCode.CONDITION_ERROR
    assert not score.passed


def test_condition_errors_are_reported_under_when() -> None:
    # A bad predicate is a load error at checks[0].when...
    with pytest.raises(SpecError) as err:
        compile_check(contains("Y", when=CheckSpec(type="nope")), "checks[0]")
    assert [v.field for v in err.value.violations] == ["checks[0].when.type"]


def test_examples_that_agree_with_the_check_load() -> None:
    # Positive examples pass and negative ones fail: the self-test holds.
    cc = compile_check(
        contains("Paris", examples=[Example("in Paris", "positive"), Example("Rome", "negative")]),
        "checks[0]",
    )
    assert len(cc.examples) == 2


def test_example_that_contradicts_the_check_is_a_load_error() -> None:
    # A positive example the check fails is reported with its index.
    with pytest.raises(SpecError) as err:
        compile_check(
            contains("Paris", examples=[Example("ok", "negative"), Example("Rome", "positive")]),
            "checks[3]",
        )
    (v,) = err.value.violations
    assert v.field == "checks[3].examples[1]" and "should pass" in v.description


def test_example_the_check_cannot_score_is_a_load_error() -> None:
    # A check that reads the sample's reference cannot self-test on text alone.
    with pytest.raises(SpecError) as err:
        compile_check(CheckSpec(type="exact", examples=[Example("x", "positive")]), "checks[0]")
    assert err.value.violations[0].field == "checks[0].examples[0]"


class FakeExtractor:
    """A judge stand-in for the extractor hook: extraction is a judge's job."""

    def __init__(self, text: str | None, cost: float = 0.01) -> None:
        self.text = text
        self.cost = cost
        self.calls = 0

    async def extract(self, criteria, sample, output, ctx, examples=()) -> Extraction:
        self.calls += 1
        if self.text is None:
            return Extraction("", cost_usd=self.cost, error_message="no table found")
        return Extraction(self.text, cost_usd=self.cost)


async def test_extractor_runs_the_check_on_the_extraction() -> None:
    # The check sees the extracted text, and the extraction's cost is added.
    cc = compile_check(
        CheckSpec(type="contains", params={"needles": ["id"]}, extractor="the column names"),
        "checks[0]",
    )
    judge = FakeExtractor("id, name, price")
    score = await run_check(cc, Sample(), Output("| a table |"), CheckContext(judge=judge))
    assert score.passed and judge.calls == 1 and score.cost_usd == pytest.approx(0.01)


async def test_extractor_failure_is_an_error_score() -> None:
    # An extraction that fails errors the check (and still counts its cost).
    cc = compile_check(
        CheckSpec(type="contains", params={"needles": ["id"]}, extractor="the column names"),
        "checks[0]",
    )
    score = await run_check(cc, Sample(), Output("x"), CheckContext(judge=FakeExtractor(None)))
    assert score.error is not None and score.error.code == ErrorCode.EXTRACTION_FAILED
    assert score.cost_usd == pytest.approx(0.01)


async def test_extractor_without_a_judge_is_an_error_score() -> None:
    # No judge configured: the extractor cannot run, which is an error, not a pass.
    cc = compile_check(
        CheckSpec(type="contains", params={"needles": ["id"]}, extractor="the column names"),
        "checks[0]",
    )
    score = await run_check(cc, Sample(), Output("id"), EMPTY_CONTEXT)
    assert score.error is not None and not score.passed


def test_blank_extractor_is_a_load_error() -> None:
    # An extractor must say what to extract.
    with pytest.raises(SpecError) as err:
        compile_check(
            CheckSpec(type="contains", params={"needles": ["a"]}, extractor="  "), "checks[0]"
        )
    assert err.value.violations[0].field == "checks[0].extractor"
