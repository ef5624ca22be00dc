"""The scoring workers write RunSuite results as bytes: the same bytes as the messages.

`wire.case_results_message` encodes results directly instead of building a Score
message per score; each case here is one where a hand-written encoder could differ from
the protobuf runtime (defaults left out, -0.0 and NaN kept, cut reasons, non-ASCII
text, long fields, error and skipped states, judge spreads, repeated verdicts).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import pytest
from scorewire.core.model import Score, ScoreError, Spread
from scorewire.engine.runner import CaseResult
from scorewire.scoring import wire
from scorewire.v1 import scoring_pb2 as pb


@dataclass
class Check:
    name: str
    type: str


CHECKS = [Check("contains", "contains"), Check("", ""), Check("名前" * 70, "regex")]


def _expected(results: list[CaseResult], cap: int) -> bytes:
    message = pb.RunSuiteResponse()
    wire.add_case_results(message.results.results, CHECKS, results, cap)
    return message.SerializeToString()


def _scored(*scores: Score, index: int = 3, sample_id: str = "s3") -> CaseResult:
    return CaseResult(index, sample_id, list(scores))


PLAIN = Score(1.0, True, "found it", latency_ms=0.0123)
CASES = {
    # The common shape, and one of each default left out.
    "plain": [_scored(PLAIN, Score(0.0, False, "missing"), Score(0.5, True, ""))],
    "index 0 and no sample id": [_scored(PLAIN, PLAIN, PLAIN, index=0, sample_id="")],
    "zero latency": [_scored(Score(1.0, True, "x"), PLAIN, PLAIN)],
    "negative zero and NaN values are written": [
        _scored(Score(-0.0, False, "neg"), Score(math.nan, False, "nan"), PLAIN)
    ],
    "integer and boolean values": [_scored(Score(1, True, "int"), Score(True, 1, "b"), PLAIN)],  # type: ignore[arg-type]
    "a reason over the cap is cut": [_scored(Score(0.2, False, "r" * 700), PLAIN, PLAIN)],
    "non-ASCII reasons and ids": [
        _scored(Score(1.0, True, "é ✓ 東京 😀"), PLAIN, PLAIN, sample_id="サンプル")
    ],
    "a score of 130 bytes needs a two-byte length": [
        _scored(Score(1.0, True, "x" * 120), PLAIN, PLAIN)
    ],
    "an error": [
        _scored(Score.fail_with_error("invalid_output", "not JSON: " + "y" * 600), PLAIN, PLAIN)
    ],
    "an error with empty code and message": [
        _scored(Score(0.0, False, "", error=ScoreError("", "")), PLAIN, PLAIN)
    ],
    "skipped": [_scored(Score(1.0, True, "condition not met", skipped=True), PLAIN, PLAIN)],
    "cost, cached and unpriced": [
        _scored(
            Score(0.7, True, "judge", cost_usd=0.0004, cached=True, unpriced=True),
            Score(0.0, False, "judge", cost_usd=-0.0),
            PLAIN,
        )
    ],
    "a judge spread": [
        _scored(Score(0.5, True, "mixed", spread=Spread((0.0, 1.0, 0.5), 0.66)), PLAIN, PLAIN)
    ],
    "the same verdict with a different pass": [
        _scored(Score(1.0, True, "same"), Score(1.0, False, "same"), Score(1.0, True, "same"))
    ],
    "a large index and many cases": [
        _scored(PLAIN, Score(0.0, False, f"miss {i}"), PLAIN, index=i, sample_id=f"s{i}")
        for i in range(0, 300_000, 997)
    ],
    "no cases": [],
}


@pytest.mark.parametrize("results", CASES.values(), ids=CASES.keys())
@pytest.mark.parametrize("cap", [500, 5])
def test_results_encode_to_the_bytes_of_the_messages(results: list[CaseResult], cap: int) -> None:
    assert wire.case_results_message(CHECKS, results, cap) == _expected(results, cap)


def test_a_result_without_a_score_per_check_is_refused_as_before() -> None:
    short = [_scored(PLAIN)]
    with pytest.raises(ValueError):
        wire.case_results_message(CHECKS, short, 500)
    with pytest.raises(ValueError):
        _expected(short, 500)


def test_text_protobuf_cannot_hold_is_refused_as_before() -> None:
    bad = [_scored(Score(1.0, True, "lone \ud800 surrogate"), PLAIN, PLAIN)]
    with pytest.raises(UnicodeEncodeError):
        wire.case_results_message(CHECKS, bad, 500)
    with pytest.raises(UnicodeEncodeError):
        _expected(bad, 500)
