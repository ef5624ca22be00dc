"""Compact checks: the line form, the JSON-array form, their check types and limits."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scorewire.core.context import EMPTY_CONTEXT
from scorewire.core.errors import SpecError
from scorewire.core.model import ErrorCode, Output, Sample, Score
from scorewire.core.registry import REGISTRY
from scorewire.engine.spec import CheckSpec, CompiledCheck, compile_check
from scorewire.suites.compact_lines import MAX_CHECKS, parse_compact_json, parse_compact_lines


def _run(cc: CompiledCheck, text: str) -> Score:
    return cc.fn(Sample(), Output(text=text), EMPTY_CONTEXT)  # type: ignore[return-value]


def _line(line: str) -> CompiledCheck:
    [cc] = parse_compact_lines([line])
    return cc


def _violations(err: SpecError) -> list[tuple[str, str]]:
    return [(v.field, v.description) for v in err.violations]


# --- the line form: what each line means ----------------------------------------------

LINES = [
    # (rule, line, answer, passes)
    ("contains finds the text", "contains:Northstar", "We chose Northstar.", True),
    ("contains is case sensitive", "contains:Northstar", "we chose northstar", False),
    ("contains ignores space after the colon", "contains: Northstar", "xNorthstar", True),
    ("contains keeps inner spaces", "contains:a b", "ab", False),
    ("exact equals the whole answer", "exact:OK", "OK", True),
    ("exact is case sensitive", "exact:OK", "ok", False),
    ("exact does not strip the answer", "exact:OK", "OK\n", False),
    ("exact is not a substring test", "exact:OK", "OK!", False),
    ("json_valid accepts an object", "json_valid", '{"a": 1}', True),
    ("json_valid accepts a bare scalar", "json_valid", "3", True),
    ("json_valid accepts surrounding white space", "json_valid", " [1] \n", True),
    ("json_valid rejects prose", "json_valid", "hello", False),
    ("json_valid rejects an empty answer", "json_valid", "", False),
    ("json_valid rejects NaN", "json_valid", "NaN", False),
    ("json_valid rejects trailing text", "json_valid", "{} x", False),
    ("length lower bound is inclusive", "length:3..5", "abc", True),
    ("length upper bound is inclusive", "length:3..5", "abcde", True),
    ("length below the minimum fails", "length:3..5", "ab", False),
    ("length above the maximum fails", "length:3..5", "abcdef", False),
    ("length counts code points, not bytes", "length:1..1", "😀", True),
    ("length counts combining marks apart", "length:1..1", "e\u0301", False),
    ("length counts spaces and line breaks", "length:3..3", " \n\t", True),
    ("length 0..0 is an empty answer", "length:0..0", "", True),
    ("length with no maximum", "length:2..", "x" * 10_000, True),
    ("length with no minimum", "length:..2", "", True),
    ("number at a pointer", "number:/score:0..10", '{"score": 7}', True),
    ("number bounds are inclusive", "number:/score:0..10", '{"score": 10}', True),
    ("number above the range fails", "number:/score:0..10", '{"score": 10.01}', False),
    ("number below the range fails", "number:/score:0..10", '{"score": -0.5}', False),
    ("a numeric string is not a number", "number:/score:0..10", '{"score": "7"}', False),
    ("a boolean is not a number", "number:/score:0..1", '{"score": true}', False),
    ("null is not a number", "number:/score:0..1", '{"score": null}', False),
    ("a missing pointer target fails", "number:/score:0..10", '{"points": 7}', False),
    ("prose fails a number check", "number:/score:0..10", "score: 7", False),
    ("NaN is not a number", "number:@:0..10", "NaN", False),
    ("@ is the root", "number:@:1..5", "3", True),
    ("@ with a numeric string fails", "number:@:1..5", '"3"', False),
    ("an array item by index", "number:/scores/0:0..1", '{"scores": [0.5, 9]}', True),
    ("an index past the end fails", "number:/scores/2:0..1", '{"scores": [0.5]}', False),
    ("an index with a leading zero fails", "number:/s/01:0..1", '{"s": [0, 1]}', False),
    ("~1 escapes / in a name", "number:/a~1b:0..1", '{"a/b": 1}', True),
    ("~0 escapes ~ in a name", "number:/a~0b:0..1", '{"a~b": 1}', True),
    ("~01 is ~ then 1, not /", "number:/~01:0..1", '{"~1": 1}', True),
    ("a colon inside the pointer", "number:/a:b:0..1", '{"a:b": 1}', True),
    ("the empty name after /", "number:/:0..1", '{"": 1}', True),
    ("negative and decimal bounds", "number:@:-1.5..-0.5", "-1", True),
    ("exponent bounds", "number:@:1e2..2E2", "150", True),
    ("a number with no maximum", "number:@:0..", "1e300", True),
    ("a big JSON number beyond doubles fails as not finite", "number:@:0..", "1e400", False),
    ("regex searches a substring", "regex:[0-9]+", "abc 42", True),
    ("regex anchors the whole answer", "regex:^OK: [0-9]{1,3}$", "OK: 12", True),
    ("regex $ is the very end", "regex:^OK$", "OK\n", False),
    ("regex is case sensitive", "regex:ok", "OK", False),
    ("regex dot excludes line breaks", "regex:a.b", "a\rb", False),
    (
        "a pathological-looking pattern runs in linear time",
        "regex:^(a|aa)*$",
        "a" * 50_000 + "!",
        False,
    ),
]


@pytest.mark.parametrize(("rule", "line", "answer", "passes"), LINES, ids=[x[0] for x in LINES])
def test_line(rule: str, line: str, answer: str, passes: bool) -> None:
    score = _run(_line(line), answer)
    assert score.error is None
    assert score.passed is passes
    assert score.value == (1.0 if passes else 0.0)
    assert score.reason


def test_the_seeds_example_block() -> None:
    # the seed's six lines load, each named by its line
    lines = [
        "contains:Northstar",
        "exact:OK",
        "json_valid",
        "length:10..500",
        "number:/score:0..10",
        "regex:^OK: [0-9]{1,3}$",
    ]
    checks = parse_compact_lines(lines)
    assert [c.name for c in checks] == lines
    # results name the canonical types: a reader finds `length`, `contains` in the docs
    assert [c.type for c in checks] == [
        "contains",
        "exact",
        "json_valid",
        "length",
        "number_range",
        "safe_regex",
    ]


def test_blank_lines_are_ignored_and_lines_are_stripped() -> None:
    # blank lines make no check; CRLF and surrounding spaces are not part of the line
    checks = parse_compact_lines(["", "  exact:OK \r", "   ", "json_valid"])
    assert [c.name for c in checks] == ["exact:OK", "json_valid"]


def test_a_string_is_split_into_lines() -> None:
    # a whole text block is read line by line
    checks = parse_compact_lines("contains:a\r\n\njson_valid\n")
    assert [c.name for c in checks] == ["contains:a", "json_valid"]


def test_an_empty_list_yields_no_checks() -> None:
    # nothing to check is not an error
    assert parse_compact_lines(["", " "]) == []
    assert parse_compact_json("[]") == []


def test_deep_json_cannot_be_scored_by_json_valid() -> None:
    # nesting beyond the parser is an error score, never a pass and never a crash
    deep = "[" * 100_000 + "]" * 100_000
    for line in ("json_valid", "number:@:0..1"):
        score = _run(_line(line), deep)
        assert score.error is not None and score.error.code == ErrorCode.INVALID_OUTPUT
        assert not score.passed


# --- the line form: load errors -------------------------------------------------------

BAD_LINES = [
    # (rule, line, message fragment)
    ("unknown kind", "startswith:OK", "unknown compact check 'startswith'"),
    ("a kind without a colon", "hello", "unknown compact check"),
    ("kinds are case sensitive", "Contains:x", "unknown compact check 'Contains'"),
    ("json_valid takes no argument", "json_valid:yes", "takes no argument"),
    ("contains needs text", "contains:", "empty"),
    ("contains needs more than spaces", "contains:   ", "empty"),
    ("length needs a range", "length:10", "A..B"),
    ("length needs a bound", "length:..", "give a minimum, a maximum or both"),
    ("length bounds are whole numbers", "length:1.5..3", "whole number"),
    ("length bounds are numbers", "length:a..3", "whole number"),
    ("length of 8193 is over the limit", "length:0..8193", "length limits are 0–8192"),
    ("a negative length is under the limit", "length:-1..3", "length limits are 0–8192"),
    ("a length range upside down", "length:5..3", "above the maximum"),
    ("number needs a pointer and a range", "number:0..10", "number:POINTER:A..B"),
    ("number needs a range", "number:/a:7", "A..B"),
    ("number bounds are numbers", "number:/a:x..1", "not a number"),
    ("number bounds reject inf", "number:/a:inf..1", "not a number"),
    ("number bounds must be finite", "number:/a:1e999..", "finite"),
    ("number bounds reject underscores", "number:/a:1_0..20", "not a number"),
    ("a number range upside down", "number:/a:2..1", "above the maximum"),
    ("a pointer must start with /", "number:score:0..1", "JSON pointer starting with '/'"),
    ("the root is @, not an empty pointer", "number::0..1", "@ for the root"),
    ("a bad ~ escape", "number:/a~2:0..1", "~0"),
    ("a trailing ~", "number:/a~:0..1", "~0"),
    ("regex outside the subset", "regex:(a+)+$", "nested repetition"),
    ("regex with flags", "regex:(?i)ok", "flags"),
    ("regex over the count limit", "regex:a{33}", "counts go up to 32"),
    ("regex over the length limit", "regex:" + "a" * 257, "limit is 256 characters"),
    ("an empty regex", "regex:", "empty"),
]


@pytest.mark.parametrize(("rule", "line", "fragment"), BAD_LINES, ids=[b[0] for b in BAD_LINES])
def test_bad_line(rule: str, line: str, fragment: str) -> None:
    with pytest.raises(SpecError) as info:
        parse_compact_lines(["json_valid", line])
    [(field, message)] = _violations(info.value)
    assert field == "compact[1]"
    assert fragment in message


def test_a_line_cannot_hold_a_line_break() -> None:
    # a list item with an embedded newline is not one line
    with pytest.raises(SpecError) as info:
        parse_compact_lines(["contains:a\nb"])
    assert "line break" in str(info.value)


def test_every_bad_line_is_reported_at_its_index() -> None:
    # all problems at once, each at the line's position (blank lines counted)
    with pytest.raises(SpecError) as info:
        parse_compact_lines(["bogus", "", "json_valid", "length:9..1", "regex:\\1"], base="checks")
    assert [f for f, _ in _violations(info.value)] == ["checks[0]", "checks[3]", "checks[4]"]


def test_a_duplicate_line_is_rejected() -> None:
    # two identical checks would share one name in the results
    with pytest.raises(SpecError) as info:
        parse_compact_lines(["exact:OK", " exact:OK"])
    assert _violations(info.value) == [("compact[1]", "duplicate check: same as compact[0]")]


def test_a_line_that_is_not_text() -> None:
    # a list of lines holds strings
    with pytest.raises(SpecError) as info:
        parse_compact_lines(["json_valid", 3])  # type: ignore[list-item]
    assert _violations(info.value)[0][0] == "compact[1]"


def _lines(n: int) -> list[str]:
    return [f"contains:{i}" for i in range(n)]


def test_ten_lines_are_accepted() -> None:
    # the limit itself is fine
    assert len(parse_compact_lines(_lines(MAX_CHECKS))) == 10


def test_eleven_lines_are_rejected() -> None:
    # one past the limit names the limit, at the first check past it
    with pytest.raises(SpecError) as info:
        parse_compact_lines(_lines(MAX_CHECKS + 1))
    [(field, message)] = _violations(info.value)
    assert field == "compact[10]"
    assert "limit is 10 checks" in message


def test_blank_lines_do_not_count_toward_the_limit() -> None:
    # ten checks among blank lines are still ten
    lines = [x for line in _lines(10) for x in (line, "")]
    assert len(parse_compact_lines(lines)) == 10


# --- the JSON-array form --------------------------------------------------------------

SEED_SCHEMA = {
    "type": "object",
    "properties": {"score": {"type": "number", "minimum": 0, "maximum": 10}},
    "required": ["score"],
    "additionalProperties": False,
}

JSON_ITEMS: list[tuple[str, dict[str, Any], str, bool]] = [
    # (rule, item, answer, passes)
    (
        "json_schema passes a conforming answer",
        {"type": "json_schema", "schema": SEED_SCHEMA},
        '{"score": 3}',
        True,
    ),
    (
        "json_schema fails an extra property",
        {"type": "json_schema", "schema": SEED_SCHEMA},
        '{"score": 3, "x": 1}',
        False,
    ),
    ("json_schema fails prose", {"type": "json_schema", "schema": SEED_SCHEMA}, "three", False),
    (
        "output_length within bounds",
        {"type": "output_length", "minimum": 10, "maximum": 500},
        "x" * 10,
        True,
    ),
    (
        "output_length below",
        {"type": "output_length", "minimum": 10, "maximum": 500},
        "x" * 9,
        False,
    ),
    ("output_length with only a maximum", {"type": "output_length", "maximum": 2}, "", True),
    (
        "number_range",
        {"type": "number_range", "path": "/score", "minimum": 0, "maximum": 10},
        '{"score": 10}',
        True,
    ),
    (
        "number_range rejects a numeric string",
        {"type": "number_range", "path": "/score", "minimum": 0, "maximum": 10},
        '{"score": "1"}',
        False,
    ),
    ("regex is the safe subset", {"type": "regex", "pattern": "^OK$"}, "OK", True),
    ("regex keeps white space", {"type": "regex", "pattern": "^OK $"}, "OK ", True),
    ("regex keeps a multi-line pattern", {"type": "regex", "pattern": "^a\nb$"}, "a\nb", True),
    ("json_valid", {"type": "json_valid"}, "[]", True),
    ("exact keeps white space", {"type": "exact", "value": " OK\n"}, " OK\n", True),
    ("exact keeps white space, strictly", {"type": "exact", "value": " OK\n"}, "OK", False),
    ("contains keeps multi-line text", {"type": "contains", "value": "a\nb"}, "xa\nbx", True),
]


@pytest.mark.parametrize(
    ("rule", "item", "answer", "passes"), JSON_ITEMS, ids=[j[0] for j in JSON_ITEMS]
)
def test_json_item(rule: str, item: dict[str, Any], answer: str, passes: bool) -> None:
    for doc in ([item], json.dumps([item])):  # a parsed list or a JSON text
        [cc] = parse_compact_json(doc)
        assert cc.name == json.dumps(item, separators=(",", ":"), ensure_ascii=False)
        score = _run(cc, answer)
        assert score.error is None, score
        assert score.passed is passes


def test_the_seeds_json_examples_load() -> None:
    # the seed's own array and objects
    doc = [
        {"type": "json_schema", "schema": SEED_SCHEMA},
        {"type": "output_length", "minimum": 10, "maximum": 500},
        {"type": "number_range", "path": "/score", "minimum": 0, "maximum": 10},
        {"type": "regex", "pattern": "^OK$"},
    ]
    checks = parse_compact_json(json.dumps(doc))
    assert [c.type for c in checks] == [
        "json_schema_v1",
        "length",
        "number_range",
        "safe_regex",
    ]


BAD_JSON: list[tuple[str, Any, str, str]] = [
    # (rule, document, field, message fragment)
    ("not JSON", "[{", "compact", "not valid JSON"),
    ("NaN is not JSON", "[NaN]", "compact", "not valid JSON"),
    ("not an array", '{"type": "json_valid"}', "compact", "must be an array"),
    ("an item that is not an object", "[1]", "compact[0]", "must be an object"),
    ("an item without a type", "[{}]", "compact[0].type", "type is missing"),
    (
        "an unknown type",
        '[{"type": "startswith"}]',
        "compact[0].type",
        "'startswith' is not supported",
    ),
    ("a type that is not a string", '[{"type": 3}]', "compact[0].type", "is not supported"),
    (
        "an unknown key",
        '[{"type": "regex", "pattern": "a", "flags": 2}]',
        "compact[0].flags",
        "unknown key 'flags' for regex; accepted: pattern",
    ),
    (
        "json_valid takes no key",
        '[{"type": "json_valid", "x": 1}]',
        "compact[0].x",
        "accepted: no other key",
    ),
    ("a missing key", '[{"type": "regex"}]', "compact[0].pattern", "required parameter is missing"),
    ("a missing path", '[{"type": "number_range", "minimum": 1}]', "compact[0].path", "missing"),
    (
        "a bound that is a string",
        '[{"type": "output_length", "minimum": "10"}]',
        "compact[0].minimum",
        "must be a number, not a string",
    ),
    (
        "a bound that is a boolean",
        '[{"type": "number_range", "path": "@", "maximum": true}]',
        "compact[0].maximum",
        "must be a number, not a boolean",
    ),
    (
        "a fractional length",
        '[{"type": "output_length", "minimum": 1.5}]',
        "compact[0].minimum",
        "integer",
    ),
    (
        "a length over 8192",
        '[{"type": "output_length", "maximum": 8193}]',
        "compact[0].maximum",
        "length limits are 0–8192",
    ),
    (
        "a negative length",
        '[{"type": "output_length", "minimum": -1}]',
        "compact[0].minimum",
        "length limits are 0–8192",
    ),
    ("no bounds at all", '[{"type": "output_length"}]', "compact[0].minimum", "give a minimum"),
    (
        "a bad pointer",
        '[{"type": "number_range", "path": "score", "minimum": 0}]',
        "compact[0].path",
        "JSON pointer",
    ),
    (
        "a regex outside the subset",
        '[{"type": "regex", "pattern": "(?=a)"}]',
        "compact[0].pattern",
        "lookarounds",
    ),
    (
        "a schema keyword outside the subset",
        '[{"type": "json_schema", "schema": {"type": "string", "format": "email"}}]',
        "compact[0].schema.format",
        "formats",
    ),
    (
        "a schema over its size limit",
        json.dumps([{"type": "json_schema", "schema": {"type": "string", "const": "x" * 5000}}]),
        "compact[0].schema",
        "4 KiB",
    ),
    (
        "a schema that is not an object",
        '[{"type": "json_schema", "schema": []}]',
        "compact[0].schema",
        "dictionary",
    ),
    ("an empty contains", '[{"type": "contains", "value": ""}]', "compact[0].value", "empty"),
    (
        "a duplicate item",
        '[{"type": "json_valid"}, {"type": "json_valid"}]',
        "compact[1]",
        "duplicate",
    ),
]


@pytest.mark.parametrize(
    ("rule", "doc", "field", "fragment"), BAD_JSON, ids=[b[0] for b in BAD_JSON]
)
def test_bad_json(rule: str, doc: Any, field: str, fragment: str) -> None:
    with pytest.raises(SpecError) as info:
        parse_compact_json(doc)
    found = _violations(info.value)
    assert any(f == field and fragment in m for f, m in found), found


def test_ten_json_items_are_accepted_and_eleven_rejected() -> None:
    # the limit counts array items too, named at the first item past it
    items = [{"type": "contains", "value": str(i)} for i in range(11)]
    assert len(parse_compact_json(items[:10])) == 10
    with pytest.raises(SpecError) as info:
        parse_compact_json(items)
    [(field, message)] = _violations(info.value)
    assert field == "compact[10]" and "limit is 10 checks" in message


def test_the_registered_types_carry_the_limits_too() -> None:
    # a suite naming the type directly gets the same load-time limits
    with pytest.raises(SpecError) as info:
        compile_check(CheckSpec("safe_regex", {"pattern": "a{40}"}), "checks.x")
    assert info.value.violations[0].field == "checks.x.params.pattern"
    for name in ("output_length", "number_range", "json_valid", "safe_regex", "json_schema_v1"):
        entry = REGISTRY.get(name)
        assert entry is not None
        # output_length is the compact spelling of length; the others are compact's own
        assert entry.family == "compact" or entry.alias_of == "length"


# --- properties -----------------------------------------------------------------------


def _load_lines(lines: Any) -> list[CompiledCheck]:
    try:
        return parse_compact_lines(lines)
    except SpecError as err:
        assert err.violations and all(v.field.startswith("compact") for v in err.violations)
        return []


_KINDS = st.sampled_from(["contains:", "exact:", "json_valid", "length:", "number:", "regex:", ""])
_LINE = st.builds(lambda k, rest: k + rest, _KINDS, st.text(max_size=40))


@settings(max_examples=200, deadline=None)
@given(st.text())
def test_any_text_loads_or_is_a_spec_error(text: str) -> None:
    # one text as a line, and as a block of lines
    _load_lines([text])
    _load_lines(text)


@settings(max_examples=200, deadline=None)
@given(st.lists(_LINE, max_size=12), st.text(max_size=30))
def test_any_lines_load_or_are_a_spec_error_and_never_crash_a_run(
    lines: list[str], answer: str
) -> None:
    # lines that load make checks that score any answer without raising
    for cc in _load_lines(lines):
        score = _run(cc, answer)
        assert score.passed in (True, False)
        assert not (score.passed and score.error is not None)


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3)
    ),
    max_leaves=10,
)
_ITEM = st.fixed_dictionaries(
    {
        "type": st.sampled_from(
            [
                "json_schema",
                "regex",
                "output_length",
                "number_range",
                "json_valid",
                "contains",
                "exact",
                "x",
            ]
        )
    },
    optional={
        "schema": _JSON,
        "pattern": st.text(max_size=20),
        "minimum": _JSON,
        "maximum": _JSON,
        "path": st.text(max_size=8),
        "value": _JSON,
    },
)


@settings(max_examples=200, deadline=None)
@given(st.one_of(st.text(), st.lists(st.one_of(_ITEM, _JSON), max_size=12), _JSON))
def test_any_json_document_loads_or_is_a_spec_error(doc: Any) -> None:
    # a JSON text, a list of (mostly) check-shaped objects, or any JSON value
    try:
        checks = parse_compact_json(doc)
    except SpecError as err:
        assert err.violations
        return
    for cc in checks:
        _run(cc, "{}")
