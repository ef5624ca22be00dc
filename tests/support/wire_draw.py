"""Serialized protobuf messages drawn from their descriptors, in every arrangement the
protobuf runtime reads.

For the differential tests of hand-written readers of the wire format: the runtime's
parse of the drawn bytes is the oracle, so the bytes need not be a message the runtime
would write. Every field of the descriptor may appear (explicit zeros included), singular
fields more than once (the last wins; messages merge), repeated scalars packed or not,
all of them in any order, with unknown fields of every wire type among them (numbers the
message lacks, and its own numbers with a wire type they do not have). Nested messages
are drawn the same way, down to `depth`. Built from the descriptors, the strategies follow
any change to the proto.
"""

from __future__ import annotations

import json
import struct
from functools import cache
from typing import Any

from google.protobuf.descriptor import Descriptor, FieldDescriptor
from hypothesis import strategies as st

FD = FieldDescriptor

_VARINT, _I64, _LEN, _SGROUP, _EGROUP, _I32 = 0, 1, 2, 3, 4, 5

_WIRE_TYPE = {
    **dict.fromkeys(
        (FD.TYPE_INT32, FD.TYPE_INT64, FD.TYPE_UINT32, FD.TYPE_UINT64, FD.TYPE_SINT32),
        _VARINT,
    ),
    **dict.fromkeys((FD.TYPE_SINT64, FD.TYPE_BOOL, FD.TYPE_ENUM), _VARINT),
    **dict.fromkeys((FD.TYPE_DOUBLE, FD.TYPE_FIXED64, FD.TYPE_SFIXED64), _I64),
    **dict.fromkeys((FD.TYPE_FLOAT, FD.TYPE_FIXED32, FD.TYPE_SFIXED32), _I32),
    **dict.fromkeys((FD.TYPE_STRING, FD.TYPE_BYTES, FD.TYPE_MESSAGE), _LEN),
}

_MAX_FIELD = (1 << 29) - 1


def varint(n: int) -> bytes:
    """An unsigned varint (negative numbers as their 64-bit two's complement)."""
    n &= (1 << 64) - 1
    out = bytearray()
    while n > 0x7F:
        out.append(n & 0x7F | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def key(number: int, wire_type: int) -> bytes:
    """A field's key: its number and wire type."""
    return varint(number << 3 | wire_type)


def _zigzag(n: int) -> int:
    return (n << 1) ^ (n >> 63)


@cache
def _json_texts() -> st.SearchStrategy[str]:
    leaves = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text()
    docs = st.recursive(
        leaves,
        lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(), inner, max_size=3),
        max_leaves=6,
    )
    return docs.map(json.dumps) | st.text(alphabet='{}[]",:0123456789.eE-+ truefalsn', max_size=12)


@cache
def _text() -> st.SearchStrategy[str]:
    # Strings the runtime accepts (valid UTF-8): no lone surrogates.
    return st.text(st.characters(exclude_categories=("Cs",)), max_size=12)


@cache
def _scalar(field: FieldDescriptor) -> st.SearchStrategy[bytes]:
    """One value of a scalar field, encoded without its key."""
    t = field.type
    if t in (FD.TYPE_INT32, FD.TYPE_ENUM):
        return st.integers(-(1 << 31), (1 << 31) - 1).map(varint)
    if t == FD.TYPE_INT64:
        return st.integers(-(1 << 63), (1 << 63) - 1).map(varint)
    if t == FD.TYPE_UINT32:
        return st.integers(0, (1 << 32) - 1).map(varint)
    if t == FD.TYPE_UINT64:
        return st.integers(0, (1 << 64) - 1).map(varint)
    if t == FD.TYPE_SINT32:
        return st.integers(-(1 << 31), (1 << 31) - 1).map(lambda n: varint(_zigzag(n)))
    if t == FD.TYPE_SINT64:
        return st.integers(-(1 << 63), (1 << 63) - 1).map(lambda n: varint(_zigzag(n)))
    if t == FD.TYPE_BOOL:
        return st.sampled_from([b"\x00", b"\x01", varint(2), varint(1 << 40)])
    if t == FD.TYPE_DOUBLE:
        return st.floats().map(lambda f: struct.pack("<d", f))
    if t == FD.TYPE_FLOAT:
        return st.floats(width=32).map(lambda f: struct.pack("<f", f))
    if t in (FD.TYPE_FIXED64, FD.TYPE_SFIXED64):
        return st.binary(min_size=8, max_size=8)
    if t in (FD.TYPE_FIXED32, FD.TYPE_SFIXED32):
        return st.binary(min_size=4, max_size=4)
    if t == FD.TYPE_BYTES:
        return st.binary(max_size=12).map(lambda b: varint(len(b)) + b)
    assert t == FD.TYPE_STRING, f"a field type the drawing lacks: {field.full_name}"
    texts = _json_texts() if field.name.endswith("_json") else _text()
    return texts.map(lambda s: varint(len(s.encode())) + s.encode())


def _packable(field: FieldDescriptor) -> bool:
    return field.is_repeated and _WIRE_TYPE[field.type] != _LEN


@cache
def _occurrences(field: FieldDescriptor, depth: int) -> st.SearchStrategy[list[bytes]]:
    """The field's pieces of a message: each a key and its value, or a packed run."""
    if field.type == FD.TYPE_MESSAGE:
        value = (
            st.just(b"")
            if depth <= 0
            else st.deferred(lambda: message_bytes(field.message_type, depth - 1))
        )
        one = value.map(lambda b: key(field.number, _LEN) + varint(len(b)) + b)
    else:
        one = _scalar(field).map(lambda b: key(field.number, _WIRE_TYPE[field.type]) + b)
    # Fewer pieces deeper down, so that a draw stays within Hypothesis's budget.
    many = st.lists(one, max_size=min(depth + 1, 3 if field.is_repeated else 2))
    if not _packable(field):
        return many
    packed = st.lists(_scalar(field), max_size=3).map(
        lambda vals: [key(field.number, _LEN) + varint(len(b"".join(vals))) + b"".join(vals)]
    )
    return many | packed


def _unknown_payload(wire_type: int, number: int) -> st.SearchStrategy[bytes]:
    if wire_type == _VARINT:
        return st.integers(0, (1 << 64) - 1).map(varint)
    if wire_type == _I64:
        return st.binary(min_size=8, max_size=8)
    if wire_type == _I32:
        return st.binary(min_size=4, max_size=4)
    if wire_type == _LEN:
        return st.binary(max_size=8).map(lambda b: varint(len(b)) + b)
    # A group: its fields (here a varint), then its end key with the same number.
    return st.lists(st.integers(0, 300).map(lambda n: key(1, _VARINT) + varint(n)), max_size=2).map(
        lambda fields: b"".join(fields) + key(number, _EGROUP)
    )


@cache
def _unknown(desc: Descriptor) -> st.SearchStrategy[bytes]:
    """A field the message does not know: a number it lacks, or one of its own numbers
    with a wire type that field does not have."""
    known = {f.number: f for f in desc.fields}

    def fits(number: int, wire_type: int) -> bool:
        field = known.get(number)
        if field is None:
            return False
        return wire_type == _WIRE_TYPE[field.type] or (wire_type == _LEN and _packable(field))

    wire_types = (_VARINT, _I64, _LEN, _SGROUP, _I32)
    near = range(1, max(known, default=0) + 4)
    pairs = [(n, w) for n in (*near, 1000, _MAX_FIELD) for w in wire_types if not fits(n, w)]
    return st.sampled_from(pairs).flatmap(
        lambda p: _unknown_payload(p[1], p[0]).map(lambda b: key(*p) + b)
    )


@st.composite
def _arranged(draw: Any, desc: Descriptor, depth: int) -> bytes:
    pieces: list[bytes] = []
    for field in desc.fields:
        pieces += draw(_occurrences(field, depth))
    pieces += draw(st.lists(_unknown(desc), max_size=2))
    order = draw(st.permutations(range(len(pieces))))
    return b"".join(pieces[i] for i in order)


@cache
def message_bytes(desc: Descriptor, depth: int = 3) -> st.SearchStrategy[bytes]:
    """Serialized `desc` messages over every field, in any arrangement the runtime reads
    (see the module docs), nested messages `depth` deep (deeper ones are empty)."""
    return _arranged(desc, depth)
