"""Score -> Score message: built field by field (the hot path of every Score and RunSuite),
it must be the message the plain keyword construction gives, whatever the score holds."""

from __future__ import annotations

import math

import pytest
from scorewire.core.model import ErrorCode, Score, ScoreError, Spread
from scorewire.scoring import wire
from scorewire.v1 import scoring_pb2 as pb


def keyword_built(name: str, ctype: str, s: Score, cap: int) -> pb.Score:
    """The construction the field-by-field one replaced, spelled out."""
    m = pb.Score(
        name=name,
        type=ctype,
        value=s.value,
        passed=s.passed,
        reason=wire.bounded_text(s.reason, cap),
        cost_usd=s.cost_usd,
        latency_ms=s.latency_ms,
        cached=s.cached,
        unpriced=s.unpriced,
    )
    if s.error is not None:
        m.error.code = s.error.code
        m.error.message = wire.bounded_text(s.error.message, cap)
    elif s.skipped:
        m.skipped = True
    elif s.spread is not None:
        m.spread.samples = s.spread.n
        m.spread.stdev = s.spread.stdev
        m.spread.agreement = s.spread.agreement
        m.spread.values.extend(s.spread.values)
        m.spread.judge_calls = s.spread.calls
    return m


def priced(s: Score, cost: float, cached: bool = False, unpriced: bool = False) -> Score:
    s.cost_usd, s.cached, s.unpriced = cost, cached, unpriced
    return s


CASES = {
    # a plain pass, with its latency
    "pass": Score(1.0, True, "found 'refund'", latency_ms=0.0123),
    # every default: nothing set but the names
    "all defaults": Score(0.0, False),
    # negative zero is kept as written, not folded into an unset zero
    "negative zero": Score(-0.0, False, "", latency_ms=-0.0),
    # a judge score with a cost, from the cache, priced or not
    "cached and priced": priced(Score(0.75, True, "polite"), 0.0004, cached=True),
    "unpriced": priced(Score(0.5, False, "meh"), 0.0, unpriced=True),
    # errors carry their code and message, cut like the reason
    "error": Score.fail_with_error(ErrorCode.TIMEOUT, "x" * 5000),
    "error set by hand": Score(0.0, False, "r", error=ScoreError("CUSTOM", "boom")),
    # a skipped check passes without having been applied
    "skipped": Score(1.0, True, "condition not met", skipped=True),
    # a sampled judge's spread
    "spread": Score(0.5, True, "split", spread=Spread((1.0, 0.5, 0.0), 2 / 3)),
    # a reason longer than the cap is cut with an ellipsis
    "long reason": Score(1.0, True, "é" * 3000),
    # non-finite values travel as they are
    "infinite value": Score(math.inf, True, "inf"),
}


@pytest.mark.parametrize("score", CASES.values(), ids=CASES.keys())
@pytest.mark.parametrize("cap", [10, wire.MAX_REASON_CHARS])
def test_field_by_field_equals_the_keyword_construction(score: Score, cap: int) -> None:
    want = keyword_built("c", "contains", score, cap)
    got = wire.score_to_pb("c", "contains", score, max_reason_chars=cap)
    assert got == want
    assert got.SerializeToString(deterministic=True) == want.SerializeToString(deterministic=True)
    # built in place in a repeated field, the same message
    out = pb.ScoreResponse()
    wire.add_scores(out.scores, [_Named("c", "contains")], [score], cap)
    assert out.scores[0] == want


class _Named:
    def __init__(self, name: str, type_: str) -> None:
        self.name, self.type = name, type_
