"""Turn plain Python values (dicts, lists, strings) into scorewire.v1 messages.

Every function also accepts the message itself, passed through unchanged, so callers mix
dicts and protos freely. Only the shape is checked here (unknown keys are a TypeError
naming the key); what the values mean is the server's business.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
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
PartLike: TypeAlias = "pb.RunPart | tuple[str, int] | None"
"""The run a RunSuite call is a part of: a RunPart, or (run id, index of its first case)."""

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


def _no_json(obj: Any) -> Any:
    raise TypeError(f"not a JSON value: {type(obj).__name__}")


# The C encoder behind `json.dumps(obj, ensure_ascii=False, allow_nan=False,
# separators=(",", ":"))`, made once: `dumps` builds one per call. No circular-reference
# markers: a value that contains itself recurses until RecursionError, as `fill_value` does.
_make_encoder = getattr(json.encoder, "c_make_encoder", None)
_encode = (
    _make_encoder(
        None, _no_json, json.encoder.encode_basestring, None, ":", ",", False, False, False
    )
    if _make_encoder is not None
    else None
)
_py_dumps = json.JSONEncoder(ensure_ascii=False, allow_nan=False, separators=(",", ":")).encode


def _dumps(obj: Any) -> str:
    if _encode is None:  # an interpreter without the C accelerator
        return _py_dumps(obj)
    return "".join(_encode(obj, 0))


def set_json(message: Message, name: str, obj: Any) -> None:
    """Set the JSON value `obj` on `message`'s `<name>_json` field as one JSON text.

    Encoding straight from the native value is several times cheaper than building a
    tree of `Value` messages, the server parses one string, and integers beyond 2^53
    travel exactly. A `Value` is kept as it is; what JSON cannot write (NaN, infinity,
    a value of another type) goes through `fill_value` into the `Value` field, which
    holds NaN and rejects the rest as before. Object keys that are not strings are
    written as JSON writes them (`1` as `"1"`).
    """
    if isinstance(obj, struct_pb2.Value):
        getattr(message, name).CopyFrom(obj)
        return
    try:
        text = _dumps(obj)
    except (TypeError, ValueError):
        fill_value(getattr(message, name), obj)
        return
    setattr(message, f"{name}_json", text)


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
    if isinstance(allowed, frozenset) and allowed.issuperset(obj):
        return  # the common case, once per case of a RunSuite
    unknown = set(obj) - set(allowed)
    if unknown:
        raise TypeError(
            f"{what} has unknown key(s) {sorted(unknown)}; expected some of {sorted(allowed)}"
        )


def _check_type(obj: Any, message: type[M], what: str) -> None:
    if type(obj) is not dict and not isinstance(obj, Mapping):  # dict first: ABC checks cost
        raise TypeError(f"{what} must be a {message.__name__} or a mapping, got {type(obj)}")


def to_sample(obj: SampleLike) -> pb.Sample:
    """A Sample from a mapping with keys id, input, expected, metadata (all optional)."""
    if isinstance(obj, pb.Sample):
        return obj
    sample = pb.Sample()
    fill_sample(sample, obj)
    return sample


def fill_sample(sample: pb.Sample, obj: SampleLike) -> None:
    """Fill the empty `sample` in place from what `to_sample` takes."""
    if isinstance(obj, pb.Sample):
        sample.CopyFrom(obj)
        return
    if obj is None:
        return
    _check_type(obj, pb.Sample, "sample")
    _keys("sample", obj, _SAMPLE_KEYS)
    sample.id = str(obj.get("id") or "")
    # An absent key leaves the field unset; an explicit None is JSON null.
    if "input" in obj:
        set_json(sample, "input", obj["input"])
    if "expected" in obj:
        set_json(sample, "expected", obj["expected"])
    if obj.get("metadata") is not None:
        fill_struct(sample.metadata, obj["metadata"])


def to_output(obj: OutputLike) -> pb.Output:
    """An Output from its text, or a mapping with keys text, value, metadata."""
    if isinstance(obj, pb.Output):
        return obj
    output = pb.Output()
    fill_output(output, obj)
    return output


def fill_output(output: pb.Output, obj: OutputLike) -> None:
    """Fill the empty `output` in place from what `to_output` takes."""
    if isinstance(obj, pb.Output):
        output.CopyFrom(obj)
        return
    if isinstance(obj, str):
        output.text = obj
        return
    _check_type(obj, pb.Output, "output")
    _keys("output", obj, _OUTPUT_KEYS)
    output.text = obj.get("text") or ""
    if "value" in obj:
        set_json(output, "value", obj["value"])
    if obj.get("metadata") is not None:
        fill_struct(output.metadata, obj["metadata"])


_SAMPLE_KEYS = frozenset(("id", "input", "expected", "metadata"))
_OUTPUT_KEYS = frozenset(("text", "value", "metadata"))


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
    """A Case from a mapping {sample, output} or a (sample, output) pair; a recorded output
    of a checkllm suite names its combination too, with any of `test` (an index or the
    test's description), `prompt` (an index) and `provider` (as the suite writes it)."""
    if isinstance(obj, pb.Case):
        return obj
    case = pb.Case()
    fill_case(case, obj)
    return case


def fill_case(case: pb.Case, obj: CaseLike) -> None:
    """Fill the empty `case` in place (no copy of its sample and output) from what
    `to_case` takes."""
    if isinstance(obj, pb.Case):
        case.CopyFrom(obj)
        return
    if isinstance(obj, tuple):
        sample, output = obj
    else:
        _check_type(obj, pb.Case, "case")
        if not _PLAIN_CASE_KEYS.issuperset(obj):  # a checkllm case naming its combination
            _keys("case", obj, _CASE_KEYS)
            for name in ("test", "prompt", "provider"):
                if (named := obj.get(name)) is not None:  # prompt 0 is a name too
                    setattr(case, name, str(named))
        sample, output = obj.get("sample"), obj.get("output", "")
    case.sample.SetInParent()  # both present even when empty, as before
    case.output.SetInParent()
    fill_sample(case.sample, sample)
    fill_output(case.output, output)


_PLAIN_CASE_KEYS = frozenset(("sample", "output"))
_CASE_KEYS = _PLAIN_CASE_KEYS | {"test", "prompt", "provider"}


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


def judge_cache(fresh_judges: bool | None) -> pb.JudgeCache.ValueType:
    """The `judge_cache` of a request: True asks the judges again (JUDGE_CACHE_REFRESH),
    False reads the verdict cache (JUDGE_CACHE_READ), None leaves it to the suite."""
    if fresh_judges is None:
        return pb.JUDGE_CACHE_UNSPECIFIED
    if not isinstance(fresh_judges, bool):
        raise TypeError(f"fresh_judges must be True, False or None, not {fresh_judges!r}")
    return pb.JUDGE_CACHE_REFRESH if fresh_judges else pb.JUDGE_CACHE_READ


def score_request(
    *,
    output: OutputLike,
    sample: SampleLike,
    checks: Iterable[CheckLike] | None,
    compact: Iterable[str] | None,
    budget_usd: float | None,
    fresh_judges: bool | None = None,
) -> pb.ScoreRequest:
    """The ScoreRequest for `Client.score`."""
    req = pb.ScoreRequest(
        sample=to_sample(sample),
        output=to_output(output),
        checks=to_checks(checks),
        compact=list(compact or ()),
        judge_cache=judge_cache(fresh_judges),
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
    part: PartLike = None,
    fresh_judges: bool | None = None,
) -> pb.RunSuiteRequest:
    """The RunSuiteRequest for `Client.run_suite`."""
    req = pb.RunSuiteRequest(
        suite_yaml=suite_yaml,
        suite_name=suite_name,
        checks=to_checks(checks),
        compact=list(compact or ()),
        gate=to_gate(gate),
        run_name=run_name,
        labels=dict(labels or {}),
        judge_cache=judge_cache(fresh_judges),
    )
    add = req.cases.add
    for c in cases:
        fill_case(add(), c)  # built in place: appending a built Case would copy it
    if budget_usd is not None:
        req.budget_usd = budget_usd
    if record is not None:
        req.record = record
    if part is not None:
        if not isinstance(part, pb.RunPart):
            part = pb.RunPart(run_id=part[0], first_index=part[1])
        req.part.CopyFrom(part)
    return req


STREAM_CHUNK_CASES = 500
"""Cases per RunSuiteStream chunk; `run_suite` streams a batch of more cases than this."""


@dataclass(frozen=True, slots=True)
class SuiteFields:
    """What `run_suite` sends besides the cases."""

    suite_yaml: str
    suite_name: str
    checks: Iterable[CheckLike] | None
    compact: Iterable[str] | None
    gate: GateLike
    budget_usd: float | None
    record: bool | None
    run_name: str
    labels: Mapping[str, str] | None
    part: PartLike = None
    fresh_judges: bool | None = None

    def request(self, cases: Iterable[CaseLike]) -> pb.RunSuiteRequest:
        """The RunSuiteRequest of these fields and `cases`."""
        return run_suite_request(
            cases=cases,
            suite_yaml=self.suite_yaml,
            suite_name=self.suite_name,
            checks=self.checks,
            compact=self.compact,
            gate=self.gate,
            budget_usd=self.budget_usd,
            record=self.record,
            run_name=self.run_name,
            labels=self.labels,
            part=self.part,
            fresh_judges=self.fresh_judges,
        )


def stream_suite_config(request: pb.RunSuiteRequest, case_count: int) -> pb.RunSuiteStreamRequest:
    """The first RunSuiteStream message: the run (without cases) and how many follow."""
    config = pb.RunSuiteStreamConfig(case_count=case_count)
    config.request.CopyFrom(request)
    return pb.RunSuiteStreamRequest(config=config)


def case_chunks(cases: Sequence[CaseLike]) -> Iterator[pb.RunSuiteStreamRequest]:
    """The RunSuiteStream messages carrying `cases`, STREAM_CHUNK_CASES a message, each
    built (in place, as in run_suite_request) when it is asked for."""
    for start in range(0, len(cases), STREAM_CHUNK_CASES):
        message = pb.RunSuiteStreamRequest()
        add = message.cases.cases.add
        for c in cases[start : start + STREAM_CHUNK_CASES]:
            fill_case(add(), c)
        yield message


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
    fresh_judges: bool | None = None,
) -> pb.ScoreStreamRequest:
    """The first ScoreStream message: the config."""
    config = pb.StreamConfig(
        suite_yaml=suite_yaml,
        suite_name=suite_name,
        checks=to_checks(checks),
        compact=list(compact or ()),
        run_name=run_name,
        labels=dict(labels or {}),
        judge_cache=judge_cache(fresh_judges),
    )
    if budget_usd is not None:
        config.budget_usd = budget_usd
    if record is not None:
        config.record = record
    return pb.ScoreStreamRequest(config=config)


def stream_case_request(obj: StreamCaseLike) -> pb.ScoreStreamRequest:
    """A later ScoreStream message: one case."""
    return pb.ScoreStreamRequest(case=to_stream_case(obj))
