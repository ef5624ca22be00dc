"""The kernel's reader of serialized cases (`service/native/src/proto.rs`) reads what the
protobuf runtime reads, or leaves the message to Python.

The kernel scores a scoring worker's chunk of serialized `Case` messages, and a unary
Score from the `ScoreRequest`'s own bytes, by reading the few fields its checks need
(the sample's id and expected value, the output's text and whether it carries a JSON
value) with a reader of its own. Messages are drawn from the descriptors
(`tests.support.wire_draw`: every field, unknown fields of every wire type, duplicated
singular fields, any order), and what the reader makes of them (`read_case`) is compared
with what the Python checks get from the runtime's parse (`scoring.wire`): equal, or
declined. On the runtime's own serialization the reader never declines the message.
"""

from __future__ import annotations

import struct
from typing import Any

from google.protobuf.message import DecodeError
from hypothesis import given, reject, settings
from hypothesis import strategies as st
from scorewire.core.model import Output, Sample
from scorewire.engine import native
from scorewire.scoring import wire
from scorewire.v1 import scoring_pb2 as pb

from tests.support.components import require_component
from tests.support.wire_draw import key, message_bytes, varint

if not native.available():
    require_component(
        "the native kernel", "not built here (make install builds service/native with cargo)"
    )

import scorewire_native


def _same(a: Any, b: Any) -> bool:
    """Equal values of equal types all the way down (1 is not 1.0; -0.0 is not 0.0)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, float):
        return struct.pack("<d", a) == struct.pack("<d", b)
    if isinstance(a, list):
        return len(a) == len(b) and all(map(_same, a, b))
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    return bool(a == b)


def _sample(m: pb.Sample) -> Sample | None:
    """The Sample Python checks get; None when the sample's expected value is not JSON
    (a request the server refuses before scoring)."""
    try:
        return wire.sample_from_pb(m)
    except ValueError:
        pass
    # Perhaps the input is what is not JSON: the expected value may still be.
    without_input = pb.Sample()
    without_input.CopyFrom(m)
    without_input.ClearField("input_json")
    try:
        return wire.sample_from_pb(without_input)
    except ValueError:
        return None


def _output(m: pb.Output) -> Output | None:
    try:
        return wire.output_from_pb(m)
    except ValueError:
        return None  # value_json that is not JSON: the server refuses the request


def _agrees(raw: bytes, message: type[pb.Case] | type[pb.ScoreRequest]) -> None:
    score_request = message is pb.ScoreRequest
    try:
        parsed = message.FromString(raw)
    except DecodeError:
        reject()
    got = scorewire_native.read_case(raw, score_request)
    if got is not None:
        sample_id, text, has_value, (expected_read, expected) = got
        assert sample_id == parsed.sample.id
        assert text == parsed.output.text
        output = _output(parsed.output)
        # A value the kernel missed would be a JSON check scoring the text instead.
        assert has_value or (output is not None and output.value is None)
        sample = _sample(parsed.sample)
        if expected_read:
            assert sample is not None, "the kernel read an expected value Python refuses"
            assert _same(expected, sample.expected)
    parsed.DiscardUnknownFields()
    assert scorewire_native.read_case(parsed.SerializeToString(), score_request) is not None


@settings(max_examples=200, deadline=None)
@given(message_bytes(pb.Case.DESCRIPTOR, depth=5))
def test_a_case_is_read_as_the_runtime_reads_it(raw: bytes) -> None:
    # A scoring worker's case, every field of Case, Sample, Output, Value, Struct and
    # ListValue drawn, in any arrangement the runtime reads.
    _agrees(raw, pb.Case)


@settings(max_examples=200, deadline=None)
@given(message_bytes(pb.ScoreRequest.DESCRIPTOR, depth=4))
def test_a_score_request_is_read_as_the_runtime_reads_it(raw: bytes) -> None:
    # A unary Score's own bytes: its checks, compact lines and budget beside the case.
    _agrees(raw, pb.ScoreRequest)


def _as_expected(value: bytes) -> bytes:
    sample = key(3, 2) + varint(len(value)) + value
    return key(1, 2) + varint(len(sample)) + sample


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        message_bytes(pb.Sample.DESCRIPTOR.fields_by_name["expected"].message_type, 5),
        min_size=1,
        max_size=2,
    )
)
def test_a_deep_expected_value_is_read_as_the_runtime_reads_it(values: list[bytes]) -> None:
    # The expected Value alone, drawn deeper (Value, Struct, its entries, ListValue, down
    # to five levels), once or twice (the runtime merges the two samples and Values).
    _agrees(b"".join(map(_as_expected, values)), pb.Case)
