"""JSON parsing shortcuts in `core.values`: each answers exactly as the standard parser."""

from __future__ import annotations

import json

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


@pytest.mark.parametrize("text", ["NaN", "[1,]", '{"a": ', "Infinity", ""])
def test_loads_fast_refuses_what_the_standard_parser_refuses(text: str) -> None:
    with pytest.raises(ValueError):
        values.loads_fast(text)
