"""Conversion between the server's request-level messages and domain types.

Cases, checks and scores are converted by the scoring layer's codec (`scoring.wire`),
which the scoring workers share; this module holds what only the server answers with:
summaries, gates, problems, and the check of a case's JSON-text fields.
"""

from __future__ import annotations

from collections.abc import Sequence

from scorewire.core.errors import FieldViolation, join_path
from scorewire.core.values import is_json, loads_fast
from scorewire.engine.summary import Gate, Summary
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


def json_field_violations(
    sample: pb.Sample, output: pb.Output, base: str = ""
) -> list[FieldViolation]:
    """What is wrong with a case's JSON-text fields: set beside their `Value`, or not JSON.

    Paths are under `base` (`cases[3]`): `cases[3].sample.expected_json`. Parsing is the
    cost of the check; the parsed value is not kept (the scoring worker parses again).
    """
    inp, exp, val = sample.input_json, sample.expected_json, output.value_json
    if not (inp or exp or val):  # the common case, checked per case of a RunSuite
        return []
    out: list[FieldViolation] = []
    for text, has_value, part, name in (
        (inp, inp and sample.HasField("input"), "sample", "input"),
        (exp, exp and sample.HasField("expected"), "sample", "expected"),
        (val, val and output.HasField("value"), "output", "value"),
    ):
        if not text:
            continue
        field = join_path(join_path(base, part), f"{name}_json")
        if has_value:
            out.append(FieldViolation(field, f"set either {name} or {name}_json, not both"))
            continue
        try:
            loads_fast(text)
        except ValueError as err:  # JSONTooDeep is a ValueError too
            out.append(FieldViolation(field, f"not valid JSON: {err}"))
    return out


def gate_to_pb(g: Gate) -> pb.Gate:
    """Gate -> Gate message: every threshold that applies set, max_error_rate always."""
    m = pb.Gate(max_error_rate=g.max_error_rate)
    if g.min_pass_rate is not None:
        m.min_pass_rate = g.min_pass_rate
    if g.min_mean_score is not None:
        m.min_mean_score = g.min_mean_score
    if g.max_cost is not None:
        m.max_cost_usd = g.max_cost
    return m


def summary_to_pb(s: Summary) -> pb.RunSummary:
    """Summary -> RunSummary message, with the sums and the gate that make it mergeable."""
    return pb.RunSummary(
        cases=s.cases,
        cases_passed=s.cases_passed,
        passed=s.passed,
        failed=s.failed,
        errored=s.errored,
        skipped=s.skipped,
        pass_rate=s.pass_rate,
        mean_score=s.mean_score,
        error_rate=s.error_rate,
        cost_usd=s.cost_usd,
        unpriced=s.unpriced,
        gate_passed=s.gate_passed,
        gate_reasons=s.gate_reasons,
        value_sum=s.value_sum,
        gate=gate_to_pb(s.gate or Gate()),
        checks=[
            pb.CheckSummary(
                name=t.name,
                type=t.type,
                passed=t.passed,
                failed=t.failed,
                errored=t.errored,
                skipped=t.skipped,
                mean_value=t.mean_value,
                value_sum=t.value_sum,
                cost_usd=t.cost_usd,
                cached=t.cached,
            )
            for t in s.checks
        ],
    )


def violations_to_pb(violations: Sequence[FieldViolation]) -> list[pb.FieldProblem]:
    """FieldViolations -> FieldProblem messages (ValidateSuite)."""
    return [pb.FieldProblem(field=v.field, description=v.description) for v in violations]
