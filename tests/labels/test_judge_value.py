"""What a judge configuration is worth, in the domain: F1 and the base rate beside kappa, the
pass level proposed for a level judge, and the name a panel or cascade is reported under."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from scorewire.checks.levels import level_scale
from scorewire.core.model import Score
from scorewire.judge.several import describe_judges
from scorewire.labels.figures import Confusion, JudgedOutput, agreement, calibrate, pair_up
from scorewire.labels.jsonl import LabelIndex
from scorewire.labels.label_model import Label, output_hash

T0 = datetime(2026, 1, 1, tzinfo=UTC)


def _paired(values: dict[str, float], human: dict[str, bool], bar: float = 0.75) -> object:
    index = LabelIndex.build([Label(s, output_hash(s), human[s], "ana", T0) for s in values])
    judged = [JudgedOutput(s, s, Score(v, v >= bar, "")) for s, v in values.items()]
    return pair_up(judged, lambda s, h: index.lookup(s, h, "default"))


@pytest.mark.parametrize(
    ("cells", "f1", "base_rate"),
    [
        # TP 20, FP 5, FN 10: 40 / (40 + 5 + 10)
        ((20, 5, 10, 15), 40 / 55, 30 / 50),
        # perfect on both classes
        ((3, 0, 0, 2), 1.0, 0.6),
        # the judge passes nothing people passed: F1 0, not undefined
        ((0, 2, 2, 0), 0.0, 0.5),
        # nobody passed anything: no positive to find, F1 undefined (never 0 or 1)
        ((0, 0, 0, 4), None, 0.0),
    ],
)
def test_f1_and_base_rate_of_hand_computed_matrices(
    cells: tuple[int, int, int, int], f1: float | None, base_rate: float
) -> None:
    c = Confusion(*cells)
    assert c.f1() == (None if f1 is None else pytest.approx(f1))
    assert c.base_rate() == pytest.approx(base_rate)


def test_agreement_reports_f1_and_the_base_rate() -> None:
    # judge passes a, b (1.0, 0.75); people pass a, c: TP 1, FP 1, FN 1
    paired = _paired(
        {"a": 1.0, "b": 0.75, "c": 0.5, "d": 0.0}, {"a": True, "b": False, "c": True, "d": False}
    )
    a = agreement(paired, resamples=10)  # type: ignore[arg-type]
    assert a.f1 == pytest.approx(0.5) and a.base_rate == pytest.approx(0.5)


def test_the_pass_level_is_the_level_whose_bar_agrees_best() -> None:
    # people pass levels 3 and above of 5 (values 0.5, 0.75, 1.0): pass_level 3
    values = {"a": 1.0, "b": 0.75, "c": 0.5, "d": 0.25, "e": 0.0, "f": 0.5}
    human = {s: v >= 0.5 for s, v in values.items()}
    cal = calibrate(_paired(values, human), scale=5)  # type: ignore[arg-type]
    assert (cal.scale, cal.pass_level) == (5, 3)
    assert cal.pass_level_point is not None and cal.pass_level_point.kappa == pytest.approx(1.0)
    assert cal.pass_level_point.threshold == pytest.approx(0.5)


def test_every_level_is_tried_even_one_the_judge_never_gave() -> None:
    # values only at levels 1 and 3 of 3; people pass the level-3 ones: pass_level 2 and 3
    # agree equally (kappa 1, accuracy 1), and the tie goes to the lower bar
    values = {"a": 1.0, "b": 0.0, "c": 1.0, "d": 0.0}
    human = {"a": True, "b": False, "c": True, "d": False}
    cal = calibrate(_paired(values, human, bar=1.0), [1.0], scale=3)  # type: ignore[arg-type]
    assert cal.pass_level == 2 and [p.threshold for p in cal.points] == [1.0]


def test_no_scale_no_pass_level() -> None:
    values = {"a": 0.9, "b": 0.1}
    cal = calibrate(_paired(values, {"a": True, "b": False}))  # type: ignore[arg-type]
    assert (cal.scale, cal.pass_level, cal.pass_level_point) == (None, None, None)


@pytest.mark.parametrize(
    ("check_type", "params", "scale"),
    [
        ("judge", {"scale": 7}, 7),
        ("judge", {}, 5),
        # a protobuf Struct carries the scale as a double
        ("judge", {"scale": 3.0}, 3),
        # a results file holds no parameters: a judge's scale is not known
        ("judge", None, None),
        ("rag.faithfulness", None, 5),
        ("contains", {}, None),
    ],
)
def test_level_scale(check_type: str, params: dict[str, object] | None, scale: int | None) -> None:
    assert level_scale(check_type, params) == scale


def _describe(model: str | None) -> str:
    return f"openai:{model or 'default'}" if model is None or ":" not in model else model


@pytest.mark.parametrize(
    ("params", "name"),
    [
        ({}, "openai:default"),
        ({"model": "openai:a"}, "openai:a"),
        (
            {"judges": ["openai:a", "b", "openai:c"]},
            "panel(majority: openai:a, openai:b, openai:c)",
        ),
        ({"judges": ["openai:a", "openai:b"], "panel": "any"}, "panel(any: openai:a, openai:b)"),
        ({"cascade": ["openai:a", "openai:b"]}, "cascade(openai:a → openai:b)"),
        # what changes a configuration's worth is in its name: weights, an audit share
        (
            {"judges": ["openai:a", "openai:b"], "panel": "weighted", "weights": [1, 2.5]},
            "panel(weighted: openai:a ×1, openai:b ×2.5)",
        ),
        (
            {"cascade": ["openai:a", "openai:b"], "audit_share": 0.05},
            "cascade(openai:a → openai:b; audit 0.05)",
        ),
        ({"cascade": ["openai:a", "openai:b"], "audit_share": 0}, "cascade(openai:a → openai:b)"),
    ],
)
def test_a_configuration_is_named_whole(params: dict[str, object], name: str) -> None:
    assert describe_judges(params, _describe) == name
