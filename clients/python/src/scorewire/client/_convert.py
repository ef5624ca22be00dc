"""Turn plain Python values (dicts, lists, strings) into scorewire.v1 messages.

Every function also accepts the message itself, passed through unchanged, so callers mix
dicts and protos freely. Only the shape is checked here (unknown keys are a TypeError
naming the key); what the values mean is the server's business.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, TypeAlias, TypeVar

from google.protobuf import struct_pb2
from google.protobuf.message import Message
from scorewire.v1 import scoring_pb2 as pb

SampleLike: TypeAlias = "pb.Sample | Mapping[str, Any] | None"
OutputLike: TypeAlias = "pb.Output | Mapping[str, Any] | str"
CheckLike: TypeAlias = "pb.CheckSpec | Mapping[str, Any]"
CaseLike: TypeAlias = "pb.Case | Mapping[str, Any] | tuple[SampleLike, OutputLike]"
StreamCaseLike: TypeAlias = "pb.StreamCase | Mapping[str, Any] | tuple[str, SampleLike, OutputLike]"
GateLike: TypeAlias = "pb.Gate | Mapping[str, float] | None"

M = TypeVar("M", bound=Message)

_KINDS = {
    "positive": pb.EXAMPLE_KIND_POSITIVE,
    "negative": pb.EXAMPLE_KIND_NEGATIVE,
}


def fill_value(target: struct_pb2.Value, obj: Any) -> None:
    """Set `target` to the JSON value `obj` (None, bool, number, str, mapping, sequence)."""
    if isinstance(obj, struct_pb2.Value):
        target.CopyFrom(obj)
    elif obj is None:
        target.null_value = struct_pb2.NULL_VALUE
    elif isinstance(obj, bool):  # before int: bool is an int
        target.bool_value = obj
    elif isinstance(obj, int | float):
        target.number_value = obj
    elif isinstance(obj, str):
        target.string_value = obj
    elif isinstance(obj, Mapping | struct_pb2.Struct):
        fill_struct(target.struct_value, obj)
    elif isinstance(obj, Sequence | struct_pb2.ListValue) and not isinstance(obj, bytes):
        lst = target.list_value
        lst.Clear()
        for item in obj:
            fill_value(lst.values.add(), item)
    else:
        raise TypeError(f"not a JSON value: {type(obj).__name__}")


def fill_struct(target: struct_pb2.Struct, obj: Mapping[str, Any] | struct_pb2.Struct) -> None:
    """Set `target` to the JSON object `obj` (keys must be strings)."""
    if isinstance(obj, struct_pb2.Struct):
        target.CopyFrom(obj)
        return
    target.Clear()
    for key, item in obj.items():
        if not isinstance(key, str):
            raise TypeError(f"JSON object keys must be strings, got {type(key).__name__}")
        fill_value(target.fields[key], item)


def to_value(obj: Any) -> struct_pb2.Value:
    """The `google.protobuf.Value` holding the JSON value `obj`."""
    value = struct_pb2.Value()
    fill_value(value, obj)
    return value


def to_struct(obj: Mapping[str, Any] | struct_pb2.Struct) -> struct_pb2.Struct:
    """The `google.protobuf.Struct` holding the JSON object `obj`."""
    struct = struct_pb2.Struct()
    fill_struct(struct, obj)
    return struct


def _keys(what: str, obj: Mapping[str, Any], allowed: Iterable[str]) -> None:
    unknown = set(obj) - set(allowed)
    if unknown:
        raise TypeError(
            f"{what} has unknown key(s) {sorted(unknown)}; expected some of {sorted(allowed)}"
        )


def _check_type(obj: Any, message: type[M], what: str) -> None:
    if not isinstance(obj, Mapping):
        raise TypeError(f"{what} must be a {message.__name__} or a mapping, got {type(obj)}")


def to_sample(obj: SampleLike) -> pb.Sample:
    """A Sample from a mapping with keys id, input, expected, metadata (all optional)."""
    if isinstance(obj, pb.Sample):
        return obj
    sample = pb.Sample()
    if obj is None:
        return sample
    _check_type(obj, pb.Sample, "sample")
    _keys("sample", obj, ("id", "input", "expected", "metadata"))
    sample.id = str(obj.get("id") or "")
    # An absent key leaves the field unset; an explicit None is JSON null.
    if "input" in obj:
        fill_value(sample.input, obj["input"])
    if "expected" in obj:
        fill_value(sample.expected, obj["expected"])
    if obj.get("metadata") is not None:
        fill_struct(sample.metadata, obj["metadata"])
    return sample


def to_output(obj: OutputLike) -> pb.Output:
    """An Output from its text, or a mapping with keys text, value, metadata."""
    if isinstance(obj, pb.Output):
        return obj
    if isinstance(obj, str):
        return pb.Output(text=obj)
    _check_type(obj, pb.Output, "output")
    _keys("output", obj, ("text", "value", "metadata"))
    output = pb.Output(text=obj.get("text") or "")
    if "value" in obj:
        fill_value(output.value, obj["value"])
    if obj.get("metadata") is not None:
        fill_struct(output.metadata, obj["metadata"])
    return output


def to_example(obj: pb.Example | Mapping[str, Any] | tuple[str, str]) -> pb.Example:
    """An Example from a mapping {text, kind} or a (text, kind) pair; kind is
    "positive" or "negative" (or the enum value)."""
    if isinstance(obj, pb.Example):
        return obj
    if isinstance(obj, tuple):
        text, kind = obj
    else:
        _check_type(obj, pb.Example, "example")
        _keys("example", obj, ("text", "kind"))
        text, kind = obj.get("text", ""), obj.get("kind", 0)
    if isinstance(kind, str):
        if kind.lower() not in _KINDS:
            raise ValueError(f"example kind must be 'positive' or 'negative', got {kind!r}")
        return pb.Example(text=text, kind=_KINDS[kind.lower()])
    return pb.Example(text=text, kind=kind)


_CHECK_KEYS = ("type", "params", "name", "when", "examples", "extractor")


def to_check(obj: CheckLike) -> pb.CheckSpec:
    """A CheckSpec from a mapping with keys type, params, name, when, examples, extractor.

    The canonical form puts parameters under `params`
    (`{"type": "contains", "params": {"needles": ["Paris"]}}`), as in the proto, so the
    server's field paths (`checks[0].params.needles`) match what the caller wrote. The
    flat form of YAML suites and the in-process API (`{"type": "contains", "needles":
    [...]}`) is accepted too: keys beside `type` that are not modifiers are the
    parameters. Both at once is a ValueError.
    """
    if isinstance(obj, pb.CheckSpec):
        return obj
    _check_type(obj, pb.CheckSpec, "check")
    flat = {k: v for k, v in obj.items() if k not in _CHECK_KEYS}
    if flat and obj.get("params") is not None:
        raise ValueError(
            f"check {obj.get('type')!r}: give parameters under 'params' or beside 'type', "
            f"not both (found {sorted(flat)} beside 'params')"
        )
    spec = pb.CheckSpec(
        type=obj.get("type") or "",
        name=obj.get("name") or "",
        extractor=obj.get("extractor") or "",
    )
    params = flat if flat else obj.get("params")
    if params is not None:
        fill_struct(spec.params, params)
    if obj.get("when") is not None:
        spec.when.CopyFrom(to_check(obj["when"]))
    spec.examples.extend(to_example(e) for e in obj.get("examples") or ())
    return spec


def to_checks(checks: Iterable[CheckLike] | None) -> list[pb.CheckSpec]:
    """CheckSpecs from a list of check mappings or messages."""
    return [to_check(c) for c in checks or ()]


def to_case(obj: CaseLike) -> pb.Case:
    """A Case from a mapping {sample, output} or a (sample, output) pair."""
    if isinstance(obj, pb.Case):
        return obj
    if isinstance(obj, tuple):
        sample, output = obj
    else:
        _check_type(obj, pb.Case, "case")
        _keys("case", obj, ("sample", "output"))
        sample, output = obj.get("sample"), obj.get("output", "")
    return pb.Case(sample=to_sample(sample), output=to_output(output))


def to_stream_case(obj: StreamCaseLike) -> pb.StreamCase:
    """A StreamCase from a mapping {request_id, sample, output} or such a triple."""
    if isinstance(obj, pb.StreamCase):
        return obj
    if isinstance(obj, tuple):
        request_id, sample, output = obj
    else:
        _check_type(obj, pb.StreamCase, "stream case")
        _keys("stream case", obj, ("request_id", "sample", "output"))
        request_id = obj.get("request_id", "")
        sample, output = obj.get("sample"), obj.get("output", "")
    return pb.StreamCase(request_id=request_id, sample=to_sample(sample), output=to_output(output))


def to_gate(obj: GateLike) -> pb.Gate | None:
    """A Gate from a mapping of its thresholds (min_pass_rate, ...), or None."""
    if obj is None or isinstance(obj, pb.Gate):
        return obj
    _check_type(obj, pb.Gate, "gate")
    _keys(
        "gate",
        obj,
        (
            "min_pass_rate",
            "min_mean_score",
            "max_error_rate",
            "max_cost_usd",
            "baseline",
            "max_regression",
        ),
    )
    gate = pb.Gate()
    for k, v in obj.items():
        if v is not None:
            setattr(gate, k, str(v) if k == "baseline" else float(v))
    return gate


def score_request(
    *,
    output: OutputLike,
    sample: SampleLike,
    checks: Iterable[CheckLike] | None,
    compact: Iterable[str] | None,
    budget_usd: float | None,
) -> pb.ScoreRequest:
    """The ScoreRequest for `Client.score`."""
    req = pb.ScoreRequest(
        sample=to_sample(sample),
        output=to_output(output),
        checks=to_checks(checks),
        compact=list(compact or ()),
    )
    if budget_usd is not None:
        req.budget_usd = budget_usd
    return req


def run_suite_request(
    *,
    cases: Iterable[CaseLike],
    suite_yaml: str,
    suite_name: str,
    checks: Iterable[CheckLike] | None,
    compact: Iterable[str] | None,
    gate: GateLike,
    budget_usd: float | None,
    record: bool | None = None,
    run_name: str = "",
    labels: Mapping[str, str] | None = None,
) -> pb.RunSuiteRequest:
    """The RunSuiteRequest for `Client.run_suite`."""
    req = pb.RunSuiteRequest(
        suite_yaml=suite_yaml,
        suite_name=suite_name,
        checks=to_checks(checks),
        compact=list(compact or ()),
        gate=to_gate(gate),
        cases=[to_case(c) for c in cases],
        run_name=run_name,
        labels=dict(labels or {}),
    )
    if budget_usd is not None:
        req.budget_usd = budget_usd
    if record is not None:
        req.record = record
    return req


def stream_config(
    *,
    suite_yaml: str,
    suite_name: str,
    checks: Iterable[CheckLike] | None,
    compact: Iterable[str] | None,
    budget_usd: float | None,
    record: bool | None = None,
    run_name: str = "",
    labels: Mapping[str, str] | None = None,
) -> pb.ScoreStreamRequest:
    """The first ScoreStream message: the config."""
    config = pb.StreamConfig(
        suite_yaml=suite_yaml,
        suite_name=suite_name,
        checks=to_checks(checks),
        compact=list(compact or ()),
        run_name=run_name,
        labels=dict(labels or {}),
    )
    if budget_usd is not None:
        config.budget_usd = budget_usd
    if record is not None:
        config.record = record
    return pb.ScoreStreamRequest(config=config)


def stream_case_request(obj: StreamCaseLike) -> pb.ScoreStreamRequest:
    """A later ScoreStream message: one case."""
    return pb.ScoreStreamRequest(case=to_stream_case(obj))
