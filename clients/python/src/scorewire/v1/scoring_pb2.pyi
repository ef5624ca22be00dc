from google.protobuf import struct_pb2 as _struct_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class ExampleKind(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    EXAMPLE_KIND_UNSPECIFIED: _ClassVar[ExampleKind]
    EXAMPLE_KIND_POSITIVE: _ClassVar[ExampleKind]
    EXAMPLE_KIND_NEGATIVE: _ClassVar[ExampleKind]
EXAMPLE_KIND_UNSPECIFIED: ExampleKind
EXAMPLE_KIND_POSITIVE: ExampleKind
EXAMPLE_KIND_NEGATIVE: ExampleKind

class Sample(_message.Message):
    __slots__ = ("id", "input", "expected", "metadata")
    ID_FIELD_NUMBER: _ClassVar[int]
    INPUT_FIELD_NUMBER: _ClassVar[int]
    EXPECTED_FIELD_NUMBER: _ClassVar[int]
    METADATA_FIELD_NUMBER: _ClassVar[int]
    id: str
    input: _struct_pb2.Value
    expected: _struct_pb2.Value
    metadata: _struct_pb2.Struct
    def __init__(self, id: _Optional[str] = ..., input: _Optional[_Union[_struct_pb2.Value, _Mapping]] = ..., expected: _Optional[_Union[_struct_pb2.Value, _Mapping]] = ..., metadata: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ...) -> None: ...

class Output(_message.Message):
    __slots__ = ("text", "value", "metadata")
    TEXT_FIELD_NUMBER: _ClassVar[int]
    VALUE_FIELD_NUMBER: _ClassVar[int]
    METADATA_FIELD_NUMBER: _ClassVar[int]
    text: str
    value: _struct_pb2.Value
    metadata: _struct_pb2.Struct
    def __init__(self, text: _Optional[str] = ..., value: _Optional[_Union[_struct_pb2.Value, _Mapping]] = ..., metadata: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ...) -> None: ...

class Example(_message.Message):
    __slots__ = ("text", "kind")
    TEXT_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    text: str
    kind: ExampleKind
    def __init__(self, text: _Optional[str] = ..., kind: _Optional[_Union[ExampleKind, str]] = ...) -> None: ...

class CheckSpec(_message.Message):
    __slots__ = ("name", "type", "params", "when", "examples", "extractor")
    NAME_FIELD_NUMBER: _ClassVar[int]
    TYPE_FIELD_NUMBER: _ClassVar[int]
    PARAMS_FIELD_NUMBER: _ClassVar[int]
    WHEN_FIELD_NUMBER: _ClassVar[int]
    EXAMPLES_FIELD_NUMBER: _ClassVar[int]
    EXTRACTOR_FIELD_NUMBER: _ClassVar[int]
    name: str
    type: str
    params: _struct_pb2.Struct
    when: CheckSpec
    examples: _containers.RepeatedCompositeFieldContainer[Example]
    extractor: str
    def __init__(self, name: _Optional[str] = ..., type: _Optional[str] = ..., params: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., when: _Optional[_Union[CheckSpec, _Mapping]] = ..., examples: _Optional[_Iterable[_Union[Example, _Mapping]]] = ..., extractor: _Optional[str] = ...) -> None: ...

class ScoreError(_message.Message):
    __slots__ = ("code", "message")
    CODE_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    code: str
    message: str
    def __init__(self, code: _Optional[str] = ..., message: _Optional[str] = ...) -> None: ...

class Score(_message.Message):
    __slots__ = ("name", "type", "value", "passed", "reason", "cost_usd", "latency_ms", "cached", "error", "unpriced")
    NAME_FIELD_NUMBER: _ClassVar[int]
    TYPE_FIELD_NUMBER: _ClassVar[int]
    VALUE_FIELD_NUMBER: _ClassVar[int]
    PASSED_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    COST_USD_FIELD_NUMBER: _ClassVar[int]
    LATENCY_MS_FIELD_NUMBER: _ClassVar[int]
    CACHED_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    UNPRICED_FIELD_NUMBER: _ClassVar[int]
    name: str
    type: str
    value: float
    passed: bool
    reason: str
    cost_usd: float
    latency_ms: float
    cached: bool
    error: ScoreError
    unpriced: bool
    def __init__(self, name: _Optional[str] = ..., type: _Optional[str] = ..., value: _Optional[float] = ..., passed: _Optional[bool] = ..., reason: _Optional[str] = ..., cost_usd: _Optional[float] = ..., latency_ms: _Optional[float] = ..., cached: _Optional[bool] = ..., error: _Optional[_Union[ScoreError, _Mapping]] = ..., unpriced: _Optional[bool] = ...) -> None: ...

class ScoreRequest(_message.Message):
    __slots__ = ("sample", "output", "checks", "compact", "budget_usd")
    SAMPLE_FIELD_NUMBER: _ClassVar[int]
    OUTPUT_FIELD_NUMBER: _ClassVar[int]
    CHECKS_FIELD_NUMBER: _ClassVar[int]
    COMPACT_FIELD_NUMBER: _ClassVar[int]
    BUDGET_USD_FIELD_NUMBER: _ClassVar[int]
    sample: Sample
    output: Output
    checks: _containers.RepeatedCompositeFieldContainer[CheckSpec]
    compact: _containers.RepeatedScalarFieldContainer[str]
    budget_usd: float
    def __init__(self, sample: _Optional[_Union[Sample, _Mapping]] = ..., output: _Optional[_Union[Output, _Mapping]] = ..., checks: _Optional[_Iterable[_Union[CheckSpec, _Mapping]]] = ..., compact: _Optional[_Iterable[str]] = ..., budget_usd: _Optional[float] = ...) -> None: ...

class ScoreResponse(_message.Message):
    __slots__ = ("scores", "passed")
    SCORES_FIELD_NUMBER: _ClassVar[int]
    PASSED_FIELD_NUMBER: _ClassVar[int]
    scores: _containers.RepeatedCompositeFieldContainer[Score]
    passed: bool
    def __init__(self, scores: _Optional[_Iterable[_Union[Score, _Mapping]]] = ..., passed: _Optional[bool] = ...) -> None: ...

class Case(_message.Message):
    __slots__ = ("sample", "output")
    SAMPLE_FIELD_NUMBER: _ClassVar[int]
    OUTPUT_FIELD_NUMBER: _ClassVar[int]
    sample: Sample
    output: Output
    def __init__(self, sample: _Optional[_Union[Sample, _Mapping]] = ..., output: _Optional[_Union[Output, _Mapping]] = ...) -> None: ...

class Gate(_message.Message):
    __slots__ = ("min_pass_rate", "min_mean_score", "max_error_rate", "max_cost_usd")
    MIN_PASS_RATE_FIELD_NUMBER: _ClassVar[int]
    MIN_MEAN_SCORE_FIELD_NUMBER: _ClassVar[int]
    MAX_ERROR_RATE_FIELD_NUMBER: _ClassVar[int]
    MAX_COST_USD_FIELD_NUMBER: _ClassVar[int]
    min_pass_rate: float
    min_mean_score: float
    max_error_rate: float
    max_cost_usd: float
    def __init__(self, min_pass_rate: _Optional[float] = ..., min_mean_score: _Optional[float] = ..., max_error_rate: _Optional[float] = ..., max_cost_usd: _Optional[float] = ...) -> None: ...

class RunSuiteRequest(_message.Message):
    __slots__ = ("suite_yaml", "suite_name", "checks", "compact", "gate", "cases", "budget_usd")
    SUITE_YAML_FIELD_NUMBER: _ClassVar[int]
    SUITE_NAME_FIELD_NUMBER: _ClassVar[int]
    CHECKS_FIELD_NUMBER: _ClassVar[int]
    COMPACT_FIELD_NUMBER: _ClassVar[int]
    GATE_FIELD_NUMBER: _ClassVar[int]
    CASES_FIELD_NUMBER: _ClassVar[int]
    BUDGET_USD_FIELD_NUMBER: _ClassVar[int]
    suite_yaml: str
    suite_name: str
    checks: _containers.RepeatedCompositeFieldContainer[CheckSpec]
    compact: _containers.RepeatedScalarFieldContainer[str]
    gate: Gate
    cases: _containers.RepeatedCompositeFieldContainer[Case]
    budget_usd: float
    def __init__(self, suite_yaml: _Optional[str] = ..., suite_name: _Optional[str] = ..., checks: _Optional[_Iterable[_Union[CheckSpec, _Mapping]]] = ..., compact: _Optional[_Iterable[str]] = ..., gate: _Optional[_Union[Gate, _Mapping]] = ..., cases: _Optional[_Iterable[_Union[Case, _Mapping]]] = ..., budget_usd: _Optional[float] = ...) -> None: ...

class CaseResult(_message.Message):
    __slots__ = ("index", "sample_id", "scores", "passed")
    INDEX_FIELD_NUMBER: _ClassVar[int]
    SAMPLE_ID_FIELD_NUMBER: _ClassVar[int]
    SCORES_FIELD_NUMBER: _ClassVar[int]
    PASSED_FIELD_NUMBER: _ClassVar[int]
    index: int
    sample_id: str
    scores: _containers.RepeatedCompositeFieldContainer[Score]
    passed: bool
    def __init__(self, index: _Optional[int] = ..., sample_id: _Optional[str] = ..., scores: _Optional[_Iterable[_Union[Score, _Mapping]]] = ..., passed: _Optional[bool] = ...) -> None: ...

class CaseResultBatch(_message.Message):
    __slots__ = ("results",)
    RESULTS_FIELD_NUMBER: _ClassVar[int]
    results: _containers.RepeatedCompositeFieldContainer[CaseResult]
    def __init__(self, results: _Optional[_Iterable[_Union[CaseResult, _Mapping]]] = ...) -> None: ...

class CheckSummary(_message.Message):
    __slots__ = ("name", "type", "passed", "failed", "errored", "mean_value", "cost_usd", "cached")
    NAME_FIELD_NUMBER: _ClassVar[int]
    TYPE_FIELD_NUMBER: _ClassVar[int]
    PASSED_FIELD_NUMBER: _ClassVar[int]
    FAILED_FIELD_NUMBER: _ClassVar[int]
    ERRORED_FIELD_NUMBER: _ClassVar[int]
    MEAN_VALUE_FIELD_NUMBER: _ClassVar[int]
    COST_USD_FIELD_NUMBER: _ClassVar[int]
    CACHED_FIELD_NUMBER: _ClassVar[int]
    name: str
    type: str
    passed: int
    failed: int
    errored: int
    mean_value: float
    cost_usd: float
    cached: int
    def __init__(self, name: _Optional[str] = ..., type: _Optional[str] = ..., passed: _Optional[int] = ..., failed: _Optional[int] = ..., errored: _Optional[int] = ..., mean_value: _Optional[float] = ..., cost_usd: _Optional[float] = ..., cached: _Optional[int] = ...) -> None: ...

class RunSummary(_message.Message):
    __slots__ = ("cases", "cases_passed", "passed", "failed", "errored", "pass_rate", "mean_score", "error_rate", "cost_usd", "unpriced", "gate_passed", "gate_reasons", "checks")
    CASES_FIELD_NUMBER: _ClassVar[int]
    CASES_PASSED_FIELD_NUMBER: _ClassVar[int]
    PASSED_FIELD_NUMBER: _ClassVar[int]
    FAILED_FIELD_NUMBER: _ClassVar[int]
    ERRORED_FIELD_NUMBER: _ClassVar[int]
    PASS_RATE_FIELD_NUMBER: _ClassVar[int]
    MEAN_SCORE_FIELD_NUMBER: _ClassVar[int]
    ERROR_RATE_FIELD_NUMBER: _ClassVar[int]
    COST_USD_FIELD_NUMBER: _ClassVar[int]
    UNPRICED_FIELD_NUMBER: _ClassVar[int]
    GATE_PASSED_FIELD_NUMBER: _ClassVar[int]
    GATE_REASONS_FIELD_NUMBER: _ClassVar[int]
    CHECKS_FIELD_NUMBER: _ClassVar[int]
    cases: int
    cases_passed: int
    passed: int
    failed: int
    errored: int
    pass_rate: float
    mean_score: float
    error_rate: float
    cost_usd: float
    unpriced: bool
    gate_passed: bool
    gate_reasons: _containers.RepeatedScalarFieldContainer[str]
    checks: _containers.RepeatedCompositeFieldContainer[CheckSummary]
    def __init__(self, cases: _Optional[int] = ..., cases_passed: _Optional[int] = ..., passed: _Optional[int] = ..., failed: _Optional[int] = ..., errored: _Optional[int] = ..., pass_rate: _Optional[float] = ..., mean_score: _Optional[float] = ..., error_rate: _Optional[float] = ..., cost_usd: _Optional[float] = ..., unpriced: _Optional[bool] = ..., gate_passed: _Optional[bool] = ..., gate_reasons: _Optional[_Iterable[str]] = ..., checks: _Optional[_Iterable[_Union[CheckSummary, _Mapping]]] = ...) -> None: ...

class RunSuiteResponse(_message.Message):
    __slots__ = ("results", "summary")
    RESULTS_FIELD_NUMBER: _ClassVar[int]
    SUMMARY_FIELD_NUMBER: _ClassVar[int]
    results: CaseResultBatch
    summary: RunSummary
    def __init__(self, results: _Optional[_Union[CaseResultBatch, _Mapping]] = ..., summary: _Optional[_Union[RunSummary, _Mapping]] = ...) -> None: ...

class StreamConfig(_message.Message):
    __slots__ = ("suite_yaml", "suite_name", "checks", "compact", "budget_usd")
    SUITE_YAML_FIELD_NUMBER: _ClassVar[int]
    SUITE_NAME_FIELD_NUMBER: _ClassVar[int]
    CHECKS_FIELD_NUMBER: _ClassVar[int]
    COMPACT_FIELD_NUMBER: _ClassVar[int]
    BUDGET_USD_FIELD_NUMBER: _ClassVar[int]
    suite_yaml: str
    suite_name: str
    checks: _containers.RepeatedCompositeFieldContainer[CheckSpec]
    compact: _containers.RepeatedScalarFieldContainer[str]
    budget_usd: float
    def __init__(self, suite_yaml: _Optional[str] = ..., suite_name: _Optional[str] = ..., checks: _Optional[_Iterable[_Union[CheckSpec, _Mapping]]] = ..., compact: _Optional[_Iterable[str]] = ..., budget_usd: _Optional[float] = ...) -> None: ...

class StreamCase(_message.Message):
    __slots__ = ("request_id", "sample", "output")
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    SAMPLE_FIELD_NUMBER: _ClassVar[int]
    OUTPUT_FIELD_NUMBER: _ClassVar[int]
    request_id: str
    sample: Sample
    output: Output
    def __init__(self, request_id: _Optional[str] = ..., sample: _Optional[_Union[Sample, _Mapping]] = ..., output: _Optional[_Union[Output, _Mapping]] = ...) -> None: ...

class ScoreStreamRequest(_message.Message):
    __slots__ = ("config", "case")
    CONFIG_FIELD_NUMBER: _ClassVar[int]
    CASE_FIELD_NUMBER: _ClassVar[int]
    config: StreamConfig
    case: StreamCase
    def __init__(self, config: _Optional[_Union[StreamConfig, _Mapping]] = ..., case: _Optional[_Union[StreamCase, _Mapping]] = ...) -> None: ...

class ScoreStreamResponse(_message.Message):
    __slots__ = ("request_id", "scores", "passed")
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    SCORES_FIELD_NUMBER: _ClassVar[int]
    PASSED_FIELD_NUMBER: _ClassVar[int]
    request_id: str
    scores: _containers.RepeatedCompositeFieldContainer[Score]
    passed: bool
    def __init__(self, request_id: _Optional[str] = ..., scores: _Optional[_Iterable[_Union[Score, _Mapping]]] = ..., passed: _Optional[bool] = ...) -> None: ...

class ListChecksRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class CheckInfo(_message.Message):
    __slots__ = ("type", "description", "family", "params_schema", "uses_judge")
    TYPE_FIELD_NUMBER: _ClassVar[int]
    DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    FAMILY_FIELD_NUMBER: _ClassVar[int]
    PARAMS_SCHEMA_FIELD_NUMBER: _ClassVar[int]
    USES_JUDGE_FIELD_NUMBER: _ClassVar[int]
    type: str
    description: str
    family: str
    params_schema: _struct_pb2.Struct
    uses_judge: bool
    def __init__(self, type: _Optional[str] = ..., description: _Optional[str] = ..., family: _Optional[str] = ..., params_schema: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., uses_judge: _Optional[bool] = ...) -> None: ...

class ListChecksResponse(_message.Message):
    __slots__ = ("checks",)
    CHECKS_FIELD_NUMBER: _ClassVar[int]
    checks: _containers.RepeatedCompositeFieldContainer[CheckInfo]
    def __init__(self, checks: _Optional[_Iterable[_Union[CheckInfo, _Mapping]]] = ...) -> None: ...

class ValidateSuiteRequest(_message.Message):
    __slots__ = ("suite_yaml", "suite_name", "checks", "compact")
    SUITE_YAML_FIELD_NUMBER: _ClassVar[int]
    SUITE_NAME_FIELD_NUMBER: _ClassVar[int]
    CHECKS_FIELD_NUMBER: _ClassVar[int]
    COMPACT_FIELD_NUMBER: _ClassVar[int]
    suite_yaml: str
    suite_name: str
    checks: _containers.RepeatedCompositeFieldContainer[CheckSpec]
    compact: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, suite_yaml: _Optional[str] = ..., suite_name: _Optional[str] = ..., checks: _Optional[_Iterable[_Union[CheckSpec, _Mapping]]] = ..., compact: _Optional[_Iterable[str]] = ...) -> None: ...

class FieldProblem(_message.Message):
    __slots__ = ("field", "description")
    FIELD_FIELD_NUMBER: _ClassVar[int]
    DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    field: str
    description: str
    def __init__(self, field: _Optional[str] = ..., description: _Optional[str] = ...) -> None: ...

class ValidateSuiteResponse(_message.Message):
    __slots__ = ("valid", "problems", "suites", "checks")
    VALID_FIELD_NUMBER: _ClassVar[int]
    PROBLEMS_FIELD_NUMBER: _ClassVar[int]
    SUITES_FIELD_NUMBER: _ClassVar[int]
    CHECKS_FIELD_NUMBER: _ClassVar[int]
    valid: bool
    problems: _containers.RepeatedCompositeFieldContainer[FieldProblem]
    suites: _containers.RepeatedScalarFieldContainer[str]
    checks: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, valid: _Optional[bool] = ..., problems: _Optional[_Iterable[_Union[FieldProblem, _Mapping]]] = ..., suites: _Optional[_Iterable[str]] = ..., checks: _Optional[_Iterable[str]] = ...) -> None: ...
