"""Cohen's kappa, its bootstrap interval, pairing and calibration against hand-computed cases."""

from __future__ import annotations

import math
import random
from array import array
from datetime import UTC, datetime

import pytest
from scorewire.core.model import ErrorCode, Score, Spread
from scorewire.labels.figures import (
    Confusion,
    JudgedOutput,
    NoPairs,
    Paired,
    agreement,
    bootstrap_kappa,
    calibrate,
    cohen_kappa,
    kappa_band,
    numeric_agreement,
    pair_up,
)
from scorewire.labels.jsonl import LabelIndex
from scorewire.labels.label_model import Label, output_hash

T0 = datetime(2026, 1, 1, tzinfo=UTC)


@pytest.mark.parametrize(
    ("cells", "expected"),
    [
        # perfect agreement with both classes present
        ((3, 0, 0, 2), 1.0),
        # chance agreement: judge half pass, people half pass, independent
        ((1, 1, 1, 1), 0.0),
        # the textbook case: p_o 0.7, p_e 0.5 → 0.4
        ((20, 5, 10, 15), 0.4),
        # complete disagreement with balanced classes
        ((0, 2, 2, 0), -1.0),
        # the judge passes everything, people fail a third: p_o 2/3 = p_e → 0
        ((2, 1, 0, 0), 0.0),
    ],
)
def test_kappa_of_hand_computed_matrices(cells: tuple[int, int, int, int], expected: float) -> None:
    assert cohen_kappa(Confusion(*cells)) == pytest.approx(expected)


@pytest.mark.parametrize(
    "cells",
    [
        (4, 0, 0, 0),  # all one class, both agree: chance agreement is 1
        (0, 0, 0, 4),
        (1, 0, 0, 0),  # a single pair
        (0, 0, 0, 0),  # nothing
    ],
)
def test_kappa_is_undefined_not_zero_when_chance_agreement_is_one(
    cells: tuple[int, int, int, int],
) -> None:
    assert cohen_kappa(Confusion(*cells)) is None


def test_perfect_agreement_has_the_interval_one_to_one() -> None:
    interval, used = bootstrap_kappa(Confusion(5, 0, 0, 5), resamples=500, seed=1, confidence=0.95)
    assert interval == (1.0, 1.0) and 0 < used <= 500


def test_the_interval_matches_the_large_sample_standard_error() -> None:
    # (20, 5, 10, 15): kappa 0.4, SE ≈ sqrt(p_o(1−p_o) / (n (1−p_e)²)) = 0.1296, so the
    # 95% interval is about 0.4 ± 0.254
    interval, used = bootstrap_kappa(
        Confusion(20, 5, 10, 15), resamples=20_000, seed=7, confidence=0.95
    )
    assert interval is not None and used == 20_000
    se = math.sqrt(0.7 * 0.3 / (50 * 0.25))
    assert interval[0] == pytest.approx(0.4 - 1.96 * se, abs=0.05)
    assert interval[1] == pytest.approx(0.4 + 1.96 * se, abs=0.05)


def test_the_interval_is_reproducible_by_seed() -> None:
    c = Confusion(8, 3, 2, 7)
    first = bootstrap_kappa(c, resamples=300, seed=42, confidence=0.9)
    assert bootstrap_kappa(c, resamples=300, seed=42, confidence=0.9) == first
    assert bootstrap_kappa(c, resamples=300, seed=43, confidence=0.9) != first


# --- pairing and the figures -----------------------------------------------------------------


def _label(sample: str, text: str, passed: bool, note: str = "", who: str = "ana") -> Label:
    return Label(sample, output_hash(text), passed, who, T0, note=note)


def _judged(sample: str, text: str, value: float, passed: bool, **kw: object) -> JudgedOutput:
    return JudgedOutput(sample, text, Score(value, passed, f"judge on {sample}", **kw))  # type: ignore[arg-type]


def test_pairs_match_sample_and_exact_output_and_list_disagreements_most_confident_first() -> None:
    index = LabelIndex.build(
        [
            _label("a", "out a", True),
            _label("b", "out b", False, "rude"),
            _label("c", "out c", True),
            _label("d", "OTHER text", True),  # labels another output of d
            _label("e", "out e", False, "wrong"),
            _label("e", "out e", True, who="bo"),
        ]
    )
    judged = [
        _judged("a", "out a", 1.0, True),
        _judged("b", "out b", 0.75, True),  # disagrees, fairly confident
        _judged("c", "out c", 0.0, False),  # disagrees, very confident
        _judged("d", "out d", 1.0, True),  # unlabelled (another output was labelled)
        _judged("e", "out e", 1.0, True),  # one labeller failed it: people fail it
        JudgedOutput("f", "out f", Score.fail_with_error(ErrorCode.JUDGE_ERROR, "down")),
    ]
    index_f = LabelIndex.build([_label("f", "out f", True)])
    lookup = lambda s, h: index.lookup(s, h, "default") or index_f.lookup(s, h, "default")  # noqa: E731
    result = agreement(pair_up(judged, lookup), resamples=100)
    assert result.pairs == 4 and result.unlabelled == 1 and result.errored == 1
    assert result.confusion == Confusion(pass_pass=1, pass_fail=2, fail_pass=1, fail_fail=0)
    assert result.accuracy == 0.25
    assert [d.sample_id for d in result.disagreements] == ["c", "e", "b"]
    assert result.disagreements[1].human_note == "ana: wrong"
    assert result.disagreements[2].judge_reason == "judge on b"


def test_sampled_scores_are_less_confident_when_their_samples_split() -> None:
    split = Spread((1.0, 1.0, 0.0), agreement=2 / 3)
    index = LabelIndex.build([_label("x", "o", False), _label("y", "o", False)])
    judged = [
        _judged("x", "o", 2 / 3, True, spread=split),
        _judged("y", "o", 0.75, True),
    ]
    result = agreement(pair_up(judged, lambda s, h: index.lookup(s, h, "default")))
    assert [d.sample_id for d in result.disagreements] == ["y", "x"]
    assert result.disagreements[1].confidence == pytest.approx(2 / 3 * 2 / 3)


def test_zero_pairs_is_an_error_not_kappa_zero() -> None:
    with pytest.raises(NoPairs, match="1 scored outputs have no label"):
        agreement(pair_up([_judged("a", "o", 1.0, True)], lambda s, h: []))


def test_a_single_pair_has_no_kappa_and_no_interval() -> None:
    index = LabelIndex.build([_label("a", "o", True)])
    result = agreement(
        pair_up([_judged("a", "o", 1.0, True)], lambda s, h: index.lookup(s, h, "default"))
    )
    assert result.pairs == 1 and result.accuracy == 1.0
    assert result.kappa is None and result.interval is None


# --- calibration -------------------------------------------------------------------------------


def test_calibration_recommends_the_threshold_with_the_highest_kappa() -> None:
    # people pass levels 4 and 5 (0.75, 1.0), fail 1..3: threshold 0.75 matches them
    values = {"a": 1.0, "b": 0.75, "c": 0.5, "d": 0.25, "e": 0.75, "f": 0.0}
    human = {"a": True, "b": True, "c": False, "d": False, "e": True, "f": False}
    index = LabelIndex.build([_label(s, s, human[s]) for s in values])
    judged = [_judged(s, s, v, v >= 0.99, cost_usd=0.01) for s, v in values.items()]
    cal = calibrate(pair_up(judged, lambda s, h: index.lookup(s, h, "default")))
    assert [p.threshold for p in cal.points] == [0.0, 0.25, 0.5, 0.75, 1.0]
    assert cal.recommended.threshold == 0.75 and cal.recommended.kappa == pytest.approx(1.0)
    assert cal.points[0].kappa == 0.0  # threshold 0 passes everything: chance level
    assert cal.cost_per_pair_usd == pytest.approx(0.01) and cal.pairs == 6


def test_calibration_at_given_thresholds() -> None:
    index = LabelIndex.build([_label("a", "a", True), _label("b", "b", False)])
    judged = [_judged("a", "a", 0.6, False), _judged("b", "b", 0.4, False)]
    cal = calibrate(pair_up(judged, lambda s, h: index.lookup(s, h, "default")), [0.5, 0.9])
    assert [p.threshold for p in cal.points] == [0.5, 0.9]
    assert cal.recommended.threshold == 0.5 and cal.recommended.kappa == pytest.approx(1.0)


# --- the sorted sweep against the plain one; pairing keeps what agreement lists -------------


def _reference_calibration(
    pairs: list[tuple[float, bool]], thresholds: list[float]
) -> list[tuple[float, Confusion]]:
    """The calibration as first written: every pair re-decided at every threshold, O(n·t)."""
    out = []
    for t in sorted(set(thresholds) if thresholds else {v for v, _ in pairs}):
        cells = [0, 0, 0, 0]
        for value, human in pairs:
            cells[(0 if value >= t - 1e-9 else 2) + (0 if human else 1)] += 1
        out.append((t, Confusion(*cells)))
    return out


def _random_pairs(rng: random.Random, n: int, nan: bool) -> list[tuple[float, bool]]:
    # levels (many ties), arbitrary floats, values a hair either side of 0.5 and, when
    # the thresholds are given, NaN (it never passes; as a candidate it has no order)
    pool = [0.0, 0.25, 0.5, 0.75, 1.0, 0.5 - 1e-9, 0.5 - 2e-9, 0.5 + 1e-12]
    pool += [float("nan")] if nan else []
    return [
        (rng.choice(pool) if rng.random() < 0.6 else rng.random(), rng.random() < 0.4)
        for _ in range(n)
    ]


@pytest.mark.parametrize("seed", range(12))
def test_the_sorted_sweep_answers_as_the_plain_one(seed: int) -> None:
    rng = random.Random(seed)
    given = seed % 3 != 0  # else every distinct value the judge gave
    pairs = _random_pairs(rng, rng.choice([1, 2, 7, 50, 400]), nan=given)
    thresholds = (
        [rng.choice([0.0, 0.5, 1.0, 0.5 - 1e-9, rng.random()]) for _ in range(30)] if given else []
    )
    index = LabelIndex.build([_label(f"s{i}", "o", h) for i, (_, h) in enumerate(pairs)])
    judged = [_judged(f"s{i}", "o", v, v >= 0.5) for i, (v, _) in enumerate(pairs)]
    cal = calibrate(pair_up(judged, lambda s, h: index.lookup(s, h, "default")), thresholds)
    want = _reference_calibration(pairs, thresholds)
    got = [(p.threshold, p.confusion) for p in cal.points]
    assert len(got) == len(want)
    for (t_got, c_got), (t_want, c_want) in zip(got, want, strict=True):
        assert t_got == t_want and c_got == c_want
    for p in cal.points:
        assert p.kappa == cohen_kappa(p.confusion) and p.accuracy == p.confusion.accuracy()


def test_pairing_keeps_the_most_confident_disagreements_as_a_full_sort_would() -> None:
    # 300 disagreements with many equal confidences and sample ids, kept 7 at a time
    rng = random.Random(5)
    rows = [(f"s{rng.randrange(20)}", rng.choice([0.0, 0.25, 0.75, 1.0])) for _ in range(300)]
    judged = [_judged(s, f"out {i}", v, True) for i, (s, v) in enumerate(rows)]
    fails = LabelIndex.build([_label(s, f"out {i}", False) for i, (s, _) in enumerate(rows)])
    lookup = lambda s, h: fails.lookup(s, h, "default")  # noqa: E731
    kept = agreement(pair_up(judged, lookup, keep=7), max_disagreements=7).disagreements
    everything = agreement(pair_up(judged, lookup, keep=1000), max_disagreements=1000)
    assert len(everything.disagreements) == 300
    assert [d.output for d in kept] == [d.output for d in everything.disagreements[:7]]
    assert everything.confusion == Confusion(pass_fail=300)


@pytest.mark.parametrize(
    ("kappa", "band"),
    [
        (None, "undefined"),
        (-0.1, "poor"),
        (0.0, "poor"),  # Landis and Koch: 0 is still "poor"; slight starts above it
        (0.2, "slight"),
        (0.41, "moderate"),
        (0.6, "moderate"),
        (0.8, "substantial"),
        (0.81, "almost perfect"),
    ],
)
def test_kappa_falls_in_its_landis_koch_band(kappa: float | None, band: str) -> None:
    # the bands' upper bounds are inclusive: 0.2 is slight, 0.8 substantial
    assert kappa_band(kappa) == band


def test_numeric_figures_compare_the_values_with_verdicts_as_numbers() -> None:
    # values 0.9, 0.8, 0.2, 0.5 against people's pass, pass, fail, fail (1, 1, 0, 0)
    paired = Paired(
        values=array("d", [0.9, 0.8, 0.2, 0.5]),
        judge_passed=array("b", [1, 1, 0, 1]),
        human_passed=array("b", [1, 1, 0, 0]),
    )
    got = numeric_agreement(paired)
    assert got.pearson == pytest.approx(0.9128709)  # numpy.corrcoef's
    assert got.spearman == pytest.approx(0.8944272)  # ties share their mean rank
    assert got.mae == pytest.approx(0.25)


def test_numeric_figures_are_undefined_when_people_never_vary() -> None:
    paired = Paired(values=array("d", [0.9, 0.1]), human_passed=array("b", [1, 1]))
    got = numeric_agreement(paired)
    assert got.pearson is None and got.spearman is None
