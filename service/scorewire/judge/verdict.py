"""Strict parsing of judge answers.

An answer must be one JSON object (a Markdown code fence around it is tolerated, prose
is not) with the required keys of the right types and values in range. Anything else
raises `VerdictError`, which a check turns into an INVALID_VERDICT error score: a
verdict that cannot be read is never a pass.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

_FENCE = re.compile(r"\A```[A-Za-z0-9_-]*\s*\n(?P<body>.*?)\n?```\Z", re.DOTALL)
_MAX_REASON = 500


class VerdictError(ValueError):
    """The judge answered, but not with a verdict that can be read."""


def _object(text: str) -> dict[str, Any]:
    body = text.strip()
    fenced = _FENCE.match(body)
    if fenced:
        body = fenced.group("body").strip()
    if not body:
        raise VerdictError("the judge gave an empty answer")
    try:
        value = json.loads(body)
    except ValueError:
        raise VerdictError("the judge's answer is not valid JSON") from None
    if not isinstance(value, dict):
        raise VerdictError("the judge's answer is JSON but not an object")
    return value


def _reasoning(obj: dict[str, Any]) -> str:
    reasoning = obj.get("reasoning", "")
    if not isinstance(reasoning, str):
        raise VerdictError('the judge\'s "reasoning" is not a string')
    reasoning = " ".join(reasoning.split())
    if len(reasoning) > _MAX_REASON:
        reasoning = reasoning[: _MAX_REASON - 1] + "…"
    return reasoning


@dataclass(frozen=True, slots=True)
class LevelVerdict:
    """A grade on a 1..scale scale."""

    level: int
    reasoning: str


def parse_level(text: str, scale: int) -> LevelVerdict:
    """Read `{"reasoning": str, "score": int}` with 1 <= score <= scale.

    The score must be a JSON integer (`4`, or `4.0`); `"4"`, `4.5` and `true` are
    rejected, as is a level outside the scale.
    """
    obj = _object(text)
    if "score" not in obj:
        raise VerdictError('the judge\'s answer has no "score"')
    raw = obj["score"]
    if isinstance(raw, bool) or not isinstance(raw, int | float):
        raise VerdictError(f'the judge\'s "score" is not an integer: {json.dumps(raw)[:40]}')
    if isinstance(raw, float) and not raw.is_integer():
        raise VerdictError(f'the judge\'s "score" is not an integer: {raw}')
    level = int(raw)
    if not 1 <= level <= scale:
        raise VerdictError(f"the judge's level {level} is outside the scale 1..{scale}")
    return LevelVerdict(level, _reasoning(obj))


@dataclass(frozen=True, slots=True)
class PairVerdict:
    """Which of two responses won: `A`, `B` or `tie`."""

    winner: str
    reasoning: str


def parse_winner(text: str) -> PairVerdict:
    """Read `{"reasoning": str, "winner": "A" | "B" | "tie"}` (case-insensitive)."""
    obj = _object(text)
    raw = obj.get("winner")
    if not isinstance(raw, str):
        raise VerdictError('the judge\'s answer has no "winner" string')
    winner = raw.strip()
    normal = {"a": "A", "b": "B", "tie": "tie"}.get(winner.lower())
    if normal is None:
        raise VerdictError(f'the judge\'s "winner" must be A, B or tie, not {winner[:20]!r}')
    return PairVerdict(normal, _reasoning(obj))


@dataclass(frozen=True, slots=True)
class ExtractVerdict:
    """What an extractor found."""

    found: bool
    text: str


def parse_extraction(text: str) -> ExtractVerdict:
    """Read `{"found": bool, "extracted": str}`."""
    obj = _object(text)
    found = obj.get("found")
    extracted = obj.get("extracted")
    if not isinstance(found, bool):
        raise VerdictError('the judge\'s "found" is not true or false')
    if not isinstance(extracted, str):
        raise VerdictError('the judge\'s "extracted" is not a string')
    return ExtractVerdict(found, extracted)
