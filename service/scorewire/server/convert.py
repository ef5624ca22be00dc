"""Conversion between the server's request-level messages and domain types.

Cases, checks and scores are converted by the scoring layer's codec (`scoring.wire`),
which the scoring workers share; this module holds what only the server answers with:
summaries, gates, problems, and the check of a case's JSON-text fields.
"""

from __future__ import annotations

from collections.abc import Sequence

from scorewire.core.errors import FieldViolation
from scorewire.core.values import is_json
from scorewire.labels.figures import Agreement, Calibration, CalibrationPoint, Confusion
from scorewire.scoring.wire import json_field_violations as json_field_violations
from scorewire.server.agreement_rpcs import Judged
from scorewire.v1 import labels_pb2 as lpb
from scorewire.v1 import scoring_pb2 as pb


def json_fields_ok(sample: pb.Sample, output: pb.Output) -> bool:
    """Whether a case's JSON-text fields are all good (`json_field_violations` finds
    nothing): the check of every case of a RunSuite, without building field paths or a
    list for the cases that pass it."""
    inp, exp, val = sample.input_json, sample.expected_json, output.value_json
    return (
        (not inp or (not sample.HasField("input") and is_json(inp)))
        and (not exp or (not sample.HasField("expected") and is_json(exp)))
        and (not val or (not output.HasField("value") and is_json(val)))
    )


def violations_to_pb(violations: Sequence[FieldViolation]) -> list[pb.FieldProblem]:
    """FieldViolations -> FieldProblem messages (ValidateSuite)."""
    return [pb.FieldProblem(field=v.field, description=v.description) for v in violations]


def confusion_to_pb(c: Confusion) -> lpb.ConfusionMatrix:
    """The wire form of a confusion matrix."""
    return lpb.ConfusionMatrix(
        judge_pass_human_pass=c.pass_pass,
        judge_pass_human_fail=c.pass_fail,
        judge_fail_human_pass=c.fail_pass,
        judge_fail_human_fail=c.fail_fail,
    )


def agreement_to_pb(j: Judged, a: Agreement) -> lpb.CheckAgreement:
    """The wire form of one check's agreement."""
    m = lpb.CheckAgreement(
        name=j.name,
        type=j.type,
        judge_model=j.judge_model,
        pairs=a.pairs,
        accuracy=a.accuracy,
        confusion=confusion_to_pb(a.confusion),
        unlabelled=a.unlabelled,
        errored=a.errored,
        cost_usd=a.cost_usd,
        confidence=a.confidence,
        resamples=a.resamples,
        base_rate=a.base_rate,
        disagreements=[
            lpb.Disagreement(
                sample_id=p.sample_id,
                output=p.output,
                judge_passed=p.judge_passed,
                judge_value=p.judge_value,
                judge_reason=p.judge_reason,
                human_passed=p.human_passed,
                human_note=p.human_note,
                confidence=p.confidence,
            )
            for p in a.disagreements
        ],
    )
    if a.kappa is not None:
        m.kappa = a.kappa
    if a.interval is not None:
        m.kappa_low, m.kappa_high = a.interval
    if a.f1 is not None:
        m.f1 = a.f1
    m.kappa_band = KAPPA_BANDS[a.band]
    numeric = a.numeric  # `figures.agreement` always measures it
    if numeric is not None:
        m.mae = numeric.mae
        # Undefined correlations are left unset, never sent as NaN.
        if numeric.pearson is not None:
            m.pearson = numeric.pearson
        if numeric.spearman is not None:
            m.spearman = numeric.spearman
    return m


KAPPA_BANDS: dict[str, lpb.KappaBand.ValueType] = {
    "undefined": lpb.KAPPA_BAND_UNSPECIFIED,
    "poor": lpb.KAPPA_BAND_POOR,
    "slight": lpb.KAPPA_BAND_SLIGHT,
    "fair": lpb.KAPPA_BAND_FAIR,
    "moderate": lpb.KAPPA_BAND_MODERATE,
    "substantial": lpb.KAPPA_BAND_SUBSTANTIAL,
    "almost perfect": lpb.KAPPA_BAND_ALMOST_PERFECT,
}
"""The wire form of each of `labels.figures.kappa_band`'s bands."""


def calibration_to_pb(j: Judged, c: Calibration) -> lpb.CheckCalibration:
    """The wire form of one check's calibration."""
    m = lpb.CheckCalibration(
        name=j.name,
        type=j.type,
        judge_model=j.judge_model,
        pairs=c.pairs,
        points=[_point_to_pb(p) for p in c.points],
        recommended_threshold=c.recommended.threshold,
        cost_usd=c.cost_usd,
        cost_per_pair_usd=c.cost_per_pair_usd,
        scale=c.scale or 0,
    )
    if c.recommended.kappa is not None:
        m.recommended_kappa = c.recommended.kappa
    if c.pass_level is not None and c.pass_level_point is not None:
        m.recommended_pass_level = c.pass_level
        m.pass_level_point.CopyFrom(_point_to_pb(c.pass_level_point))
    return m


def _point_to_pb(p: CalibrationPoint) -> lpb.CalibrationPoint:
    point = lpb.CalibrationPoint(
        threshold=p.threshold, accuracy=p.accuracy, confusion=confusion_to_pb(p.confusion)
    )
    if p.kappa is not None:
        point.kappa = p.kappa
    return point


FORMATS: dict[int, str] = {
    pb.SUITE_FORMAT_EVALSTONE: "evalstone",
    pb.SUITE_FORMAT_CHECKLLM: "checkllm",
}
"""SuiteFormat values and the loaders' names; unspecified is '' (detected)."""


def format_name(value: int) -> str:  # SuiteFormat values are ints at run time
    """The loader's name of a SuiteFormat, '' when unspecified (or unknown: detected)."""
    return FORMATS.get(value, "")
