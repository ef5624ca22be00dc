"""checkllm assertions -> check specs: renamed catalog types, pass-through, error paths."""

from __future__ import annotations

from typing import Any

import pytest
from scorewire.core.context import CheckContext
from scorewire.core.errors import SpecError
from scorewire.core.model import Output, Sample, Score
from scorewire.core.registry import REGISTRY, NoParams, ParamError, Params, Registry, check_type
from scorewire.suites.checkllm_assertions import (
    checkllm_assertion_to_spec,
    compile_checkllm_assertion,
)

PATH = "tests[0].assert[1]"

MAPPINGS: list[tuple[str, dict[str, Any], str, dict[str, Any]]] = [
    # (rule, assertion, type, params)
    (
        "contains takes its value as the one needle",
        {"type": "contains", "value": "Paris"},
        "contains",
        {"needles": ["Paris"]},
    ),
    (
        "contains keeps the catalog's other keys",
        {"type": "contains", "value": "a", "case_sensitive": False},
        "contains",
        {"needles": ["a"], "case_sensitive": False},
    ),
    (
        "contains written with needles passes through",
        {"type": "contains", "needles": ["a", "b"]},
        "contains",
        {"needles": ["a", "b"]},
    ),
    (
        "regex takes its value as the pattern",
        {"type": "regex", "value": r"\d+"},
        "regex",
        {"pattern": r"\d+"},
    ),
    (
        "exact_match is exact with expected, verbatim",
        {"type": "exact_match", "value": "OK"},
        "exact",
        {"expected": "OK", "strip": False},
    ),
    (
        "exact_match keeps a strip written in the file",
        {"type": "exact_match", "value": "OK", "strip": True},
        "exact",
        {"expected": "OK", "strip": True},
    ),
    ("no_pii is safety.no_pii", {"type": "no_pii"}, "safety.no_pii", {}),
    (
        "no_pii keeps kinds",
        {"type": "no_pii", "kinds": ["email"]},
        "safety.no_pii",
        {"kinds": ["email"]},
    ),
    ("text types pass through", {"type": "max_tokens", "value": 200}, "max_tokens", {"value": 200}),
    (
        "thresholds pass through",
        {"type": "rouge_l", "value": "ref", "threshold": 0.7},
        "rouge_l",
        {"value": "ref", "threshold": 0.7},
    ),
    (
        "judge types pass through",
        {"type": "relevance", "threshold": 0.8},
        "relevance",
        {"threshold": 0.8},
    ),
    ("unknown types pass through to be reported", {"type": "nonsense"}, "nonsense", {}),
]


@pytest.mark.parametrize(
    ("assertion", "kind", "params"),
    [m[1:] for m in MAPPINGS],
    ids=[m[0] for m in MAPPINGS],
)
def test_mapping(assertion: dict[str, Any], kind: str, params: dict[str, Any]) -> None:
    spec = checkllm_assertion_to_spec(assertion, PATH)
    assert spec.type == kind
    assert dict(spec.params) == params
    # results are named as the file names the assertion; parameters sit beside type
    assert spec.name == assertion["type"]
    assert spec.params_path == ""


def test_mapping_does_not_change_the_assertion() -> None:
    # the loader may reuse the parsed YAML (for reports); it stays as written
    assertion = {"type": "contains", "value": "Paris"}
    checkllm_assertion_to_spec(assertion, PATH)
    assert assertion == {"type": "contains", "value": "Paris"}


SHAPE_ERRORS = [
    # (rule, assertion, field, fragment)
    ("an assertion is a mapping", "contains", PATH, "mapping"),
    ("a list is not an assertion", ["contains"], PATH, "mapping"),
    ("type is required", {"value": "x"}, f"{PATH}.type", "needs a `type`"),
    ("type is a string", {"type": 3}, f"{PATH}.type", "needs a `type`"),
    ("type is not blank", {"type": " "}, f"{PATH}.type", "needs a `type`"),
    ("a renamed value is a string", {"type": "contains", "value": 30}, f"{PATH}.value", "string"),
    ("a regex value is a string", {"type": "regex", "value": None}, f"{PATH}.value", "string"),
]


@pytest.mark.parametrize(
    ("assertion", "field", "fragment"),
    [e[1:] for e in SHAPE_ERRORS],
    ids=[e[0] for e in SHAPE_ERRORS],
)
def test_shape_errors(assertion: Any, field: str, fragment: str) -> None:
    with pytest.raises(SpecError) as err:
        checkllm_assertion_to_spec(assertion, PATH)
    [v] = err.value.violations
    assert v.field == field and fragment in v.description


# --- compiling: violations in the file's own terms ------------------------------------------


def _stand_in_catalog() -> Registry:
    """Catalog types with the catalog's parameter names, in a registry of their own."""
    reg = Registry()

    class NeedleParams(Params):
        needles: list[str]
        case_sensitive: bool = True

    class PatternParams(Params):
        pattern: str

    class ExpectedParams(Params):
        expected: str
        strip: bool = True

    def build(params: Any) -> Any:
        if isinstance(params, PatternParams) and "(" in params.pattern:
            raise ParamError("pattern", "unbalanced group")

        def fn(sample: Sample, output: Output, ctx: CheckContext) -> Score:
            return Score(1.0, True, "ok")

        return fn

    check_type("contains", description="d", family="t", params=NeedleParams, registry=reg)(build)
    check_type("regex", description="d", family="t", params=PatternParams, registry=reg)(build)
    check_type("exact", description="d", family="t", params=ExpectedParams, registry=reg)(build)
    check_type("safety.no_pii", description="d", family="t", params=NoParams, registry=reg)(build)
    return reg


RENAMED_ERRORS = [
    # (rule, assertion, field)
    ("a regex error is reported at value", {"type": "regex", "value": "("}, f"{PATH}.value"),
    (
        "an unknown key is reported as written",
        {"type": "contains", "value": "a", "threshold": 1},
        f"{PATH}.threshold",
    ),
    ("an empty exact_match value is legal", {"type": "exact_match", "value": ""}, None),
    (
        "catalog keys written directly keep their path",
        {"type": "contains", "needles": "a"},
        f"{PATH}.needles",
    ),
    ("no_pii takes no value", {"type": "no_pii", "value": "x"}, f"{PATH}.value"),
]


@pytest.mark.parametrize(
    ("assertion", "field"),
    [e[1:] for e in RENAMED_ERRORS],
    ids=[e[0] for e in RENAMED_ERRORS],
)
def test_violations_use_the_format_keys(assertion: dict[str, Any], field: str | None) -> None:
    reg = _stand_in_catalog()
    if field is None:  # valid: an empty exact_match value is a legal expected text
        assert compile_checkllm_assertion(assertion, PATH, registry=reg).name == "exact_match"
        return
    with pytest.raises(SpecError) as err:
        compile_checkllm_assertion(assertion, PATH, registry=reg)
    assert [v.field for v in err.value.violations] == [field]


def test_contains_value_type_errors_name_value_not_needles() -> None:
    # the renamed key never leaks: `needles[0]` would not be found in the file
    reg = _stand_in_catalog()
    with pytest.raises(SpecError) as err:
        compile_checkllm_assertion({"type": "contains", "value": ["a"]}, PATH, registry=reg)
    assert [v.field for v in err.value.violations] == [f"{PATH}.value"]


TEXT_ASSERTIONS = [
    # (rule, assertion, output, passes)
    ("not_contains", {"type": "not_contains", "value": "sorry"}, "Sure.", True),
    ("starts_with", {"type": "starts_with", "value": "Sure"}, "Sure.", True),
    ("ends_with", {"type": "ends_with", "value": "!"}, "Sure.", False),
    ("max_tokens", {"type": "max_tokens", "value": 200}, "hello world", True),
    ("min_tokens", {"type": "min_tokens", "value": 3}, "hello world", False),
    ("word_count", {"type": "word_count", "value": 1}, "hello world", False),
    ("is_json", {"type": "is_json"}, "[1]", True),
    ("is_valid_python", {"type": "is_valid_python"}, "print(1)", True),
    ("language", {"type": "language", "value": "en"}, "The return policy is thirty days.", True),
    ("bleu", {"type": "bleu", "value": "the cat sat on the mat"}, "the cat sat on the mat", True),
    (
        "rouge_l",
        {"type": "rouge_l", "value": "東京は日本の首都です", "threshold": 0.9},
        "日本の首都は東京です",
        False,
    ),
]


@pytest.mark.parametrize(
    ("assertion", "text", "passes"),
    [t[1:] for t in TEXT_ASSERTIONS],
    ids=[t[0] for t in TEXT_ASSERTIONS],
)
def test_format_assertions_compile_and_run(
    assertion: dict[str, Any], text: str, passes: bool
) -> None:
    # the format's deterministic types run through the real registry under their names
    cc = compile_checkllm_assertion(assertion, PATH)
    assert cc.name == assertion["type"]
    score = cc.fn(Sample(), Output(text=text), CheckContext())
    assert isinstance(score, Score) and score.error is None, score
    assert score.passed is passes, score


def test_text_type_violations_are_at_the_assertion_keys() -> None:
    # parameters sit beside type: `threshold`, not `params.threshold`
    with pytest.raises(SpecError) as err:
        compile_checkllm_assertion({"type": "not_contains", "value": "x", "threshold": 1}, PATH)
    assert [v.field for v in err.value.violations] == [f"{PATH}.threshold"]


def test_unknown_type_is_reported_at_type() -> None:
    # a misspelt type is named at its own field, with a suggestion
    with pytest.raises(SpecError) as err:
        compile_checkllm_assertion({"type": "rouge-l", "value": "x"}, PATH)
    [v] = err.value.violations
    assert v.field == f"{PATH}.type" and "rouge_l" in v.description


CATALOG = [
    # (rule, assertion, output, passes)
    ("contains finds the value", {"type": "contains", "value": "Paris"}, "It is Paris.", True),
    ("contains misses", {"type": "contains", "value": "Paris"}, "It is Lyon.", False),
    ("regex matches the value", {"type": "regex", "value": r"\d{2} days"}, "within 30 days", True),
    ("exact_match equals", {"type": "exact_match", "value": "OK"}, "OK", True),
    ("exact_match differs", {"type": "exact_match", "value": "OK"}, "Not OK", False),
    ("exact_match keeps a trailing space", {"type": "exact_match", "value": "OK"}, "OK ", False),
    ("exact_match keeps a trailing newline", {"type": "exact_match", "value": "OK"}, "OK\n", False),
    ("exact_match keeps leading spaces", {"type": "exact_match", "value": "OK"}, "  OK", False),
    ("exact_match keeps case", {"type": "exact_match", "value": "OK"}, "ok", False),
    (
        "exact_match of nothing fails a blank output",
        {"type": "exact_match", "value": ""},
        " ",
        False,
    ),
    (
        "exact_match strips when the file asks",
        {"type": "exact_match", "value": "OK", "strip": True},
        "OK\n",
        True,
    ),
    ("no_pii catches an email", {"type": "no_pii"}, "write to ann@example.com", False),
    ("no_pii passes clean text", {"type": "no_pii"}, "no personal data here", True),
]


@pytest.mark.parametrize(
    ("assertion", "text", "passes"),
    [c[1:] for c in CATALOG],
    ids=[c[0] for c in CATALOG],
)
def test_renamed_types_run_on_the_catalog(
    assertion: dict[str, Any], text: str, passes: bool
) -> None:
    # end to end against the real catalog checks, once they are registered
    spec = checkllm_assertion_to_spec(assertion, PATH)
    if REGISTRY.get(spec.type) is None:
        pytest.skip(f"catalog check {spec.type!r} is not registered yet")
    cc = compile_checkllm_assertion(assertion, PATH)
    score = cc.fn(Sample(), Output(text=text), CheckContext())
    assert isinstance(score, Score) and score.error is None, score
    assert score.passed is passes, score.reason
