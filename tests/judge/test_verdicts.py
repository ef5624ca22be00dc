"""Strict verdict parsing: what the judge must answer, and everything that is rejected."""

from __future__ import annotations

import pytest
from scorewire.judge.verdict import (
    VerdictError,
    parse_extraction,
    parse_level,
    parse_winner,
)

LEVEL_OK = [
    # plain object, reasoning then score
    ('{"reasoning": "fine", "score": 4}', 5, 4, "fine"),
    # integer-valued float is an integer
    ('{"reasoning": "x", "score": 3.0}', 5, 3, "x"),
    # reasoning is optional
    ('{"score": 1}', 5, 1, ""),
    # bounds are inclusive
    ('{"score": 5}', 5, 5, ""),
    # a Markdown fence around the object is tolerated
    ('```json\n{"reasoning": "f", "score": 2}\n```', 5, 2, "f"),
    # a bare fence too
    ('```\n{"score": 2}\n```', 3, 2, ""),
    # whitespace in reasoning is collapsed
    ('{"reasoning": "a\\n  b", "score": 2}', 2, 2, "a b"),
    # extra keys are ignored
    ('{"score": 2, "confidence": 0.3}', 2, 2, ""),
]


@pytest.mark.parametrize(("text", "scale", "level", "reasoning"), LEVEL_OK)
def test_parse_level_accepts(text: str, scale: int, level: int, reasoning: str) -> None:
    got = parse_level(text, scale)
    assert (got.level, got.reasoning) == (level, reasoning)


LEVEL_BAD = [
    # prose around the JSON is not a verdict
    ('Sure! {"score": 4}', "not valid JSON"),
    # empty answer
    ("   ", "empty answer"),
    # a JSON array is not an object
    ("[4]", "not an object"),
    # no score
    ('{"reasoning": "x"}', 'no "score"'),
    # a string score is rejected
    ('{"score": "4"}', "not an integer"),
    # a fractional score is rejected
    ('{"score": 4.5}', "not an integer"),
    # a boolean is not an integer
    ('{"score": true}', "not an integer"),
    # above the scale
    ('{"score": 6}', "outside the scale 1..5"),
    # below the scale
    ('{"score": 0}', "outside the scale 1..5"),
    # reasoning of the wrong type
    ('{"reasoning": 3, "score": 2}', '"reasoning" is not a string'),
    # truncated JSON
    ('{"reasoning": "cut', "not valid JSON"),
]


@pytest.mark.parametrize(("text", "message"), LEVEL_BAD)
def test_parse_level_rejects(text: str, message: str) -> None:
    with pytest.raises(VerdictError, match=message.replace("(", r"\(").replace(".", r"\.")):
        parse_level(text, 5)


def test_long_reasoning_is_clipped() -> None:
    # a rambling judge does not blow up the reason string
    got = parse_level('{"reasoning": "' + "x" * 2000 + '", "score": 2}', 5)
    assert len(got.reasoning) == 500 and got.reasoning.endswith("…")


@pytest.mark.parametrize(
    ("text", "winner"),
    [
        ('{"reasoning": "r", "winner": "A"}', "A"),  # A wins
        ('{"winner": "b"}', "B"),  # case-insensitive
        ('{"winner": " Tie "}', "tie"),  # tie, trimmed
    ],
)
def test_parse_winner_accepts(text: str, winner: str) -> None:
    assert parse_winner(text).winner == winner


@pytest.mark.parametrize(
    "text",
    [
        '{"winner": "C"}',  # not a side
        '{"winner": 1}',  # not a string
        '{"reasoning": "r"}',  # missing
        "A",  # not JSON
    ],
)
def test_parse_winner_rejects(text: str) -> None:
    with pytest.raises(VerdictError):
        parse_winner(text)


def test_parse_extraction() -> None:
    # found with text, and not found
    assert parse_extraction('{"found": true, "extracted": "a, b"}').text == "a, b"
    assert parse_extraction('{"found": false, "extracted": ""}').found is False


@pytest.mark.parametrize(
    "text",
    [
        '{"found": "yes", "extracted": "a"}',  # found must be a boolean
        '{"found": true}',  # extracted missing
        '{"found": true, "extracted": ["a"]}',  # extracted must be a string
    ],
)
def test_parse_extraction_rejects(text: str) -> None:
    with pytest.raises(VerdictError):
        parse_extraction(text)
