"""The scoring workers write RunSuite results as bytes: the same bytes as the messages.

`wire.case_results_message` encodes results directly instead of building a Score
message per score; each case here is one where a hand-written encoder could differ from
the protobuf runtime (defaults left out, -0.0 and NaN kept, cut reasons, non-ASCII
text, long fields, error and skipped states, judge spreads, repeated verdicts). A
checkllm combination's result (`CheckllmResults`, both of a checkllm run's paths) is
held to the message the server built before, with its combination and generation fields.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import pytest
from scorewire.core.model import Output, Score, ScoreError, Spread
from scorewire.engine.runner import CaseResult
from scorewire.generation.generator import Produced
from scorewire.scoring import checkllm_results, fields, wire
from scorewire.scoring.checkllm_results import CheckllmResults, CombinationBytes
from scorewire.suites.checkllm import load_checkllm_text
from scorewire.suites.checkllm_suite import CheckllmSuite
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


# ---- a checkllm combination's result -------------------------------------------------

CHECKLLM_DOC = """
prompts: ['A {{q}}', 'B {{q}}']
providers: ["openai:gpt-4o-mini", echo]
tests:
  - {vars: {q: a}, assert: [{type: contains, value: x}, {type: regex, value: y},
                            {type: max_tokens, value: 9}]}
  - {description: "Rückgabe 東京", vars: {q: b, expected: y},
     assert: [{type: contains}, {type: regex, value: y}, {type: max_tokens, value: 9}]}
"""
"""Three checks a test (as CHECKS), the first test without a description (its index and
its first prompt are zeros the runtime leaves out), the second with one beyond ASCII."""

PRODUCED = {
    "recorded": None,
    "generated": Produced(Output("Paris, " * 100), cost_usd=0.00042),
    "generated, cached (free)": Produced(Output("Rome"), cached=True),
    "generation failed": Produced.failed("GENERATION_ERROR", "503"),
}


def _combination_message(
    suite: CheckllmSuite, number: int, r: CaseResult,
    produced: Produced | None, cap: int, out_cap: int,
) -> bytes:  # fmt: skip
    """What the server sent before results were written by hand: the runtime's bytes."""
    test, prompt, at = suite.combination(number)
    m = wire.case_result_to_pb(suite.plans()[test].checks, r, max_reason_chars=cap)
    m.combination.test = test
    m.combination.test_description = suite.tests[test].description
    m.combination.prompt = prompt
    m.combination.provider = suite.providers[at].id
    m.generated = produced is not None
    m.generation_cost_usd = produced.cost_usd if produced is not None else 0.0
    if produced is not None and produced.output is not None:
        m.generated_output = wire.bounded_text(produced.output.text, out_cap)
    return pb.RunSuiteResponse(results=pb.CaseResultBatch(results=[m])).SerializeToString()


@pytest.mark.parametrize("produced", PRODUCED.values(), ids=PRODUCED.keys())
@pytest.mark.parametrize("number", range(8))  # 2 tests × 2 prompts × 2 providers
def test_a_checkllm_result_encodes_to_the_bytes_of_its_message(
    number: int, produced: Produced | None
) -> None:
    # every shape of score above, in every combination, recorded and generated
    suite = load_checkllm_text(CHECKLLM_DOC)
    writer = CheckllmResults(suite, 500, 64)
    for results in CASES.values():
        for r in results[:20]:
            got = writer.message([writer.result(number, r, produced)])
            assert got == _combination_message(suite, number, r, produced, 500, 64)


def test_a_result_the_kernel_wrote_gets_the_same_combination_fields() -> None:
    # the kernel writes a result's own fields as `ResultWriter.result` does
    suite = load_checkllm_text(CHECKLLM_DOC)
    writer = CheckllmResults(suite, 500, 64)
    plain = wire.ResultWriter(500)
    for number in (0, 7):
        heads = plain.heads(suite.plans()[suite.combination(number)[0]].checks)
        for r in CASES["plain"] + CASES["an error"] + CASES["index 0 and no sample id"]:
            own = plain.result(heads, r)
            assert writer.scored(number, own) == writer.result(number, r, None)


def test_result_bodies_are_the_results_of_a_message() -> None:
    results = CASES["a large index and many cases"]
    message = wire.case_results_message(CHECKS, results, 500)
    bodies = fields.result_bodies(message)
    assert [pb.CaseResult.FromString(b) for b in bodies] == list(
        pb.RunSuiteResponse.FromString(message).results.results
    )
    assert fields.result_bodies(b"") == []


RICH = pb.Output(text="x", value_json='{"a": 1}', metadata={"source": "replay"})
OUTPUTS = {
    # an output goes as its text when it has nothing more, else as its message
    "empty": (pb.Output(), ""),
    "text": (pb.Output(text="Paris"), "Paris"),
    "long text": (pb.Output(text="東京 " * 50), "東京 " * 50),
    "a value and metadata": (RICH, RICH.SerializeToString()),
}


@pytest.mark.parametrize("expected_json", ["", '"Paris"', '{"must_include":["Rome"]}'])
@pytest.mark.parametrize(("output", "sent"), OUTPUTS.values(), ids=OUTPUTS.keys())
def test_a_case_for_the_kernel_is_the_runtime_case(
    expected_json: str, output: pb.Output, sent: str | bytes
) -> None:
    written = wire.sample_case(wire.sample_field("t0/p1/echo", expected_json), sent)
    sample = pb.Sample(id="t0/p1/echo", expected_json=expected_json)
    assert written == pb.Case(sample=sample, output=output).SerializeToString()


def test_a_suite_past_the_combinations_kept_writes_the_others_each_time(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # a document of millions of combinations keeps the bytes of the first ones only
    whole = CombinationBytes(load_checkllm_text(CHECKLLM_DOC))
    monkeypatch.setattr(checkllm_results, "COMBINATIONS_KEPT", 3)
    capped = CombinationBytes(load_checkllm_text(CHECKLLM_DOC))
    for _ in range(2):  # written, then kept (or written again)
        assert [capped.recorded(n) for n in range(8)] == [whole.recorded(n) for n in range(8)]
        assert [capped.sample_field(n) for n in range(8)] == [
            whole.sample_field(n) for n in range(8)
        ]
