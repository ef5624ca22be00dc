"""server/intake.py's scan of the wire format, held to the protobuf runtime.

Requests are drawn from the message descriptors: every field of RunSuiteRequest and
RunSuiteStreamRequest (nested messages, maps, oneofs, repeated and packed fields), each
field (and each element of a repeated one) encoded on its own and the encodings
shuffled, unknown fields of every wire type (groups included) mixed in, and some
requests cut short or corrupted. What `split` keeps must parse to the runtime's message
without its cases, and its cases to the runtime's cases; a request the runtime refuses
must be refused somewhere along the way, and never the other way round.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from google.protobuf.descriptor import Descriptor, FieldDescriptor
from google.protobuf.message import Message
from hypothesis import given, settings
from hypothesis import strategies as st
from scorewire.server import intake
from scorewire.server.status import RequestRejected
from scorewire.v1 import scoring_pb2 as pb

FD = FieldDescriptor
_SCALARS: dict[int, st.SearchStrategy[Any]] = {
    FD.TYPE_DOUBLE: st.floats(allow_nan=False),
    FD.TYPE_FLOAT: st.floats(width=32, allow_nan=False),
    FD.TYPE_INT64: st.integers(-(2**63), 2**63 - 1),
    FD.TYPE_UINT64: st.integers(0, 2**64 - 1),
    FD.TYPE_INT32: st.integers(-(2**31), 2**31 - 1),
    FD.TYPE_UINT32: st.integers(0, 2**32 - 1),
    FD.TYPE_SINT32: st.integers(-(2**31), 2**31 - 1),
    FD.TYPE_SINT64: st.integers(-(2**63), 2**63 - 1),
    FD.TYPE_FIXED32: st.integers(0, 2**32 - 1),
    FD.TYPE_FIXED64: st.integers(0, 2**64 - 1),
    FD.TYPE_SFIXED32: st.integers(-(2**31), 2**31 - 1),
    FD.TYPE_SFIXED64: st.integers(-(2**63), 2**63 - 1),
    FD.TYPE_BOOL: st.booleans(),
    FD.TYPE_STRING: st.text(max_size=8),
    FD.TYPE_BYTES: st.binary(max_size=8),
}


def _value(field: FieldDescriptor, depth: int) -> st.SearchStrategy[Any]:
    if field.type == FD.TYPE_MESSAGE:
        return _message(field.message_type, depth + 1)
    if field.type == FD.TYPE_ENUM:
        return st.sampled_from([v.number for v in field.enum_type.values])
    return _SCALARS[field.type]


@st.composite
def _message(draw: st.DrawFn, desc: Descriptor, depth: int = 0) -> Message:
    """A message of `desc` with a random choice of its fields set (nested up to 4 deep)."""
    from google.protobuf import message_factory

    msg = message_factory.GetMessageClass(desc)()
    if depth > 4:
        return msg
    for field in desc.fields:
        if not draw(st.booleans()):
            continue
        if field.message_type is not None and field.message_type.GetOptions().map_entry:
            key_f, value_f = (
                field.message_type.fields_by_name["key"],
                field.message_type.fields_by_name["value"],
            )
            for k in draw(st.lists(_value(key_f, depth), max_size=2)):
                value = draw(_value(value_f, depth))
                target = getattr(msg, field.name)
                if value_f.type == FD.TYPE_MESSAGE:
                    target[k].CopyFrom(value)
                else:
                    target[k] = value
        elif field.is_repeated:
            values = draw(st.lists(_value(field, depth), max_size=3))
            target = getattr(msg, field.name)
            for v in values:
                if field.type == FD.TYPE_MESSAGE:
                    target.add().CopyFrom(v)
                else:
                    target.append(v)
        elif field.type == FD.TYPE_MESSAGE:
            getattr(msg, field.name).CopyFrom(draw(_value(field, depth)))
        else:
            setattr(msg, field.name, draw(_value(field, depth)))
    return msg


def _pieces(msg: Message) -> list[bytes]:
    """The message's encoding field by field, a repeated field element by element."""
    out = []
    for field, value in msg.ListFields():
        values = value if field.is_repeated else [value]
        if field.message_type is not None and field.message_type.GetOptions().map_entry:
            values = list(value.items())
        for v in values:
            one = type(msg)()
            if field.message_type is not None and field.message_type.GetOptions().map_entry:
                k, item = v
                if field.message_type.fields_by_name["value"].type == FD.TYPE_MESSAGE:
                    getattr(one, field.name)[k].CopyFrom(item)
                else:
                    getattr(one, field.name)[k] = item
            elif field.is_repeated:
                target = getattr(one, field.name)
                target.add().CopyFrom(v) if field.type == FD.TYPE_MESSAGE else target.append(v)
            elif field.type == FD.TYPE_MESSAGE:
                getattr(one, field.name).CopyFrom(v)
            else:
                setattr(one, field.name, v)
            out.append(one.SerializeToString())
    return out


def _varint(n: int) -> bytes:
    out = bytearray()
    while n > 0x7F:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


@st.composite
def _unknown(draw: st.DrawFn) -> bytes:
    """An unknown field (numbers far from the messages' own) of any wire type."""
    number = draw(st.integers(1000, 5000))
    kind = draw(st.sampled_from([0, 1, 2, 3, 5]))
    tag = _varint(number << 3 | kind)
    if kind == 0:
        return tag + _varint(draw(st.integers(0, 2**64 - 1)))
    if kind == 1:
        return tag + draw(st.binary(min_size=8, max_size=8))
    if kind == 5:
        return tag + draw(st.binary(min_size=4, max_size=4))
    if kind == 2:
        body = draw(st.binary(max_size=6))
        return tag + _varint(len(body)) + body
    inner = _varint(7 << 3) + _varint(draw(st.integers(0, 300)))  # a group with a field
    return tag + inner + _varint(number << 3 | 4)


@st.composite
def _wire(draw: st.DrawFn, desc: Descriptor) -> bytes:
    """A message of `desc` as shuffled pieces with unknown fields among them, sometimes
    corrupted (a byte changed) or cut short."""
    msg = draw(_message(desc))
    pieces = _pieces(msg) + draw(st.lists(_unknown(), max_size=3))
    data = b"".join(draw(st.permutations(pieces)))
    damage = draw(st.sampled_from(["none", "none", "none", "cut", "flip"]))
    if damage == "cut" and data:
        data = data[: draw(st.integers(0, len(data) - 1))]
    elif damage == "flip" and data:
        i = draw(st.integers(0, len(data) - 1))
        data = data[:i] + bytes([draw(st.integers(0, 255))]) + data[i + 1 :]
    return data


def _parse(cls: type[Message], data: bytes) -> Message | None:
    try:
        return cls.FromString(data)
    except Exception:
        return None


def _split(data: bytes, path: tuple[int, ...]) -> tuple[bytes, list[bytes]] | None:
    try:
        rest, cases = asyncio.run(intake.split(data, path))
    except RequestRejected:
        return None
    return rest, [bytes(c) for c in cases]


def _cases_of(msg: Message, path_names: tuple[str, ...]) -> Any:
    for name in path_names:
        msg = getattr(msg, name)
    return msg


def _check(cls: type[Message], data: bytes, path: tuple[int, ...], names: tuple[str, ...]) -> None:
    whole = _parse(cls, data)
    split = _split(data, path)
    if split is None:
        assert whole is None, "the scan refused what the runtime reads"
        return
    rest, cases = split
    left = _parse(cls, rest)
    parsed = [_parse(pb.Case, c) for c in cases]
    if whole is None:
        # refused somewhere along the way: the rest, or a case
        assert left is None or any(c is None for c in parsed)
        return
    assert left is not None and all(c is not None for c in parsed)
    assert parsed == list(_cases_of(whole, names))
    without = type(whole)()
    without.CopyFrom(whole)
    holder: Any = without
    for name in names[:-1]:  # only where the request has the messages on the way
        if not holder.HasField(name):
            break
        holder = getattr(holder, name)
    else:
        del getattr(holder, names[-1])[:]
    assert left == without


@settings(max_examples=300, deadline=None)
@given(data=_wire(pb.RunSuiteRequest.DESCRIPTOR))
def test_a_run_suite_request_splits_as_the_runtime_reads_it(data: bytes) -> None:
    _check(pb.RunSuiteRequest, data, intake.RUN_SUITE_CASES, ("cases",))


@settings(max_examples=200, deadline=None)
@given(data=_wire(pb.RunSuiteStreamRequest.DESCRIPTOR))
def test_a_stream_config_splits_as_the_runtime_reads_it(data: bytes) -> None:
    _check(
        pb.RunSuiteStreamRequest, data, intake.STREAM_CONFIG_CASES, ("config", "request", "cases")
    )


@settings(max_examples=200, deadline=None)
@given(data=_wire(pb.RunSuiteStreamRequest.DESCRIPTOR))
def test_a_stream_chunk_splits_as_the_runtime_reads_it(data: bytes) -> None:
    _check(pb.RunSuiteStreamRequest, data, intake.STREAM_CHUNK_CASES, ("cases", "cases"))


def test_the_path_follows_the_descriptors() -> None:
    # the field numbers come from the messages, so a renumbered field moves the scan too
    assert (pb.RunSuiteRequest.DESCRIPTOR.fields_by_name["cases"].number,) == intake.RUN_SUITE_CASES
    assert pb.RunSuiteRequest.DESCRIPTOR.fields_by_name["cases"].message_type is pb.Case.DESCRIPTOR


@pytest.mark.parametrize(
    "data",
    [b"\x32\x05ab", b"\x32", b"\x0a\x80", b"\x00", b"\x1b\x08\x01"],
    ids=["case cut short", "no length", "bad varint", "field 0", "group never ends"],
)
def test_bytes_that_end_inside_a_field_are_refused(data: bytes) -> None:
    assert _split(data, intake.RUN_SUITE_CASES) is None
    assert _parse(pb.RunSuiteRequest, data) is None
