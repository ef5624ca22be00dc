"""JSON parsing shortcuts in `core.values`: each answers exactly as the standard parser."""

from __future__ import annotations

import json
import tracemalloc

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scorewire.core import values


def _decoder(text: str) -> tuple[bool, object, str]:
    try:
        return True, values._DECODER.decode(text), ""
    except ValueError as err:
        return False, None, str(err)


@settings(max_examples=3000, deadline=None)
@given(st.text(alphabet=' \t\n\r\x0bab{}[]"ntfNI-09.,:xé'))
def test_parse_json_fails_early_with_the_decoders_own_message(text: str) -> None:
    # Text that cannot start a JSON value is refused without raising; verdict and
    # message must be the decoder's, whitespace and line breaks before it included.
    assert values.parse_json(text) == _decoder(text)


@pytest.mark.parametrize(
    "text",
    [
        '{"a": [1, 2.5, "x", null, true]}',
        str(2**63),  # 19 digits: past what orjson keeps exactly
        str(-(2**64) - 1),
        "1e400",  # a float overflowing to infinity, as the standard parser reads it
        '"\\ud800"',  # a lone surrogate, which orjson refuses
        "[" * 2000 + "]" * 2000,  # deeper than orjson's limit
        "-0",
    ],
)
def test_loads_fast_returns_what_the_standard_parser_returns(text: str) -> None:
    try:
        want = values.loads_strict(text)
    except ValueError as err:
        with pytest.raises(type(err)):
            values.loads_fast(text)
        return
    got = values.loads_fast(text)
    assert json.dumps(got) == json.dumps(want) and type(got) is type(want)


@settings(max_examples=3000, deadline=None)
@given(
    st.text(alphabet=' \t\n\r{}[]"ntfNI-09.,:eé\\u')
    | st.integers(min_value=-(10**30), max_value=10**30).map(str)
)
def test_is_json_says_what_the_standard_parser_says(text: str) -> None:
    assert values.is_json(text) is _strict_accepts(text)


@pytest.mark.parametrize(
    "text", ["NaN", "[1,]", "Infinity", "", "[" * 2000 + "]" * 2000, "1" * 5000, '"\\ud800"']
)
def test_is_json_on_what_orjson_and_the_standard_parser_disagree_on(text: str) -> None:
    assert values.is_json(text) is _strict_accepts(text)


def _strict_accepts(text: str) -> bool:
    try:
        values.loads_strict(text)
    except ValueError:
        return False
    return True


@pytest.mark.parametrize("text", ["NaN", "[1,]", '{"a": ', "Infinity", ""])
def test_loads_fast_refuses_what_the_standard_parser_refuses(text: str) -> None:
    with pytest.raises(ValueError):
        values.loads_fast(text)


@pytest.mark.parametrize(
    "text",
    [
        '{"a": [1, 2.5, "x", null, true], "a": 3}',  # a repeated key: the last one wins
        str(2**63),
        "1e400",
        '"\\ud800"',
        '{"order_id": 1001, "items": [{"sku": "SKU-1", "qty": 2}], "total": 12.5}',
        '{"order_id": 1001, "items": [{"sku": "SKU-1", "qty": 2}',  # cut short
        "-0",
        "1.0",
        " [1] x",
    ],
)
def test_parse_json_answers_as_the_standard_parser(text: str) -> None:
    # parse_json tries orjson first; verdict, value (types included) and message must
    # be the standard decoder's.
    ok, got, err = values.parse_json(text)
    want_ok, want, want_err = _decoder(text)
    assert (ok, err) == (want_ok, want_err)
    assert json.dumps(got) == json.dumps(want) and type(got) is type(want)


def _json_equal_rule(a: object, b: object) -> bool:
    """The rule as written: numbers by value, booleans only with booleans, objects by
    keys whatever their order, arrays (lists or tuples) element by element."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, int | float) and isinstance(b, int | float):
        return a == b
    if isinstance(a, str) or isinstance(b, str):
        return isinstance(a, str) and isinstance(b, str) and a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return set(a) == set(b) and all(_json_equal_rule(a[k], b[k]) for k in a)
    if isinstance(a, list | tuple) and isinstance(b, list | tuple):
        return len(a) == len(b) and all(_json_equal_rule(x, y) for x, y in zip(a, b, strict=True))
    return a is None and b is None


_atoms = st.sampled_from([None, True, False, 0, 1, 1.0, 0.0, -0.0, 2, "1", "a", ""])
_values = st.recursive(
    _atoms,
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.lists(inner, max_size=3).map(tuple)
        | st.dictionaries(st.sampled_from("abc"), inner, max_size=3)
    ),
    max_leaves=8,
)


@settings(max_examples=3000, deadline=None)
@given(_values, _values)
def test_json_equal_follows_the_rule(a: object, b: object) -> None:
    # The exact-type shortcut must agree with the general rule: 1 == 1.0, true != 1,
    # key order ignored, a tuple equals the list of its items.
    assert values.json_equal(a, b) == _json_equal_rule(a, b)
    assert values.json_equal(a, a) == _json_equal_rule(a, a)


def test_an_outputs_text_is_parsed_once_and_again_when_it_changes() -> None:
    from scorewire.core.model import Output

    out = Output('{"a": 1}')
    first = values.output_json(out)
    assert first == (True, {"a": 1}, "") and values.output_json(out) is first
    out.text = "not json"
    ok, _, err = values.output_json(out)
    assert not ok and err.startswith("Expecting value")


@settings(max_examples=3000, deadline=None)
@given(st.lists(st.integers(min_value=-(2**70), max_value=2**70), max_size=12))
def test_loads_fast_keeps_every_integer_exact(numbers: list[int]) -> None:
    # Digits spread over many numbers add up to 19 and more without a run of 19: only a
    # run sends a text to the standard parser, and no integer comes back a float.
    text = json.dumps({"n": numbers, "s": "é" * 3})
    got = values.loads_fast(text)
    assert got == {"n": numbers, "s": "é" * 3}
    assert all(type(n) is int for n in got["n"])


@pytest.mark.parametrize(
    ("text", "run"),
    [
        ("1" * 18, False),
        ("1" * 19, True),
        ("1" * 9 + "," + "1" * 10, False),  # 19 digits, no run
        ("é" * 40 + "2" * 19, True),  # non-ASCII before the run
        ("\ud800" + "3" * 19, True),  # a lone surrogate (not from the wire, but a str)
        ("٣" * 30, False),  # Arabic-Indic digits are not JSON digits
    ],
)
def test_long_digit_runs_are_found_as_the_pattern_finds_them(text: str, run: bool) -> None:
    assert values._may_hold_long_digits(text) is run
    assert (values._LONG_DIGITS.search(text) is not None) is run


# --- measuring and previewing JSON without writing it out ------------------------------

JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(),
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(st.text(), inner, max_size=5),
    max_leaves=30,
)


@settings(max_examples=500, deadline=None)
@given(JSON_VALUES, st.sampled_from([(",", ":"), (", ", ": ")]))
def test_json_length_is_the_length_json_dumps_writes(value: object, seps: tuple[str, str]) -> None:
    written = json.dumps(value, ensure_ascii=False, separators=seps)
    assert values.json_length(value, separators=seps) == len(written)


@settings(max_examples=500, deadline=None)
@given(JSON_VALUES, st.integers(0, 200))
def test_json_head_is_a_long_enough_start_of_the_text(value: object, limit: int) -> None:
    written = json.dumps(value, ensure_ascii=False)
    head = values.json_head(value, limit)
    assert written.startswith(head) and len(head) >= min(limit + 1, len(written))


def test_json_length_past_its_limit_stops_and_says_more() -> None:
    big = [["x" * 4000] * 1000] * 1000  # 4 GB once written out
    assert 65_536 < values.json_length(big, 65_536) < 70_000


def test_a_preview_of_a_big_value_writes_only_its_start() -> None:
    # Reasons quote expected values (`equals`): a parameter aliasing one part many
    # times was written out whole, per case, to show 60 characters of it.
    big = [["x" * 4000] * 1000] * 10  # 40 MB once written out
    tracemalloc.start()
    try:
        shown = values.preview(big)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert shown == '[["' + "x" * 56 + "…" and peak < 1_000_000, peak
