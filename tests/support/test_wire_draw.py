"""The drawn wire bytes are messages the protobuf runtime reads, whatever the field types."""

from __future__ import annotations

import pytest
from google.protobuf import descriptor_pb2, message_factory, struct_pb2, wrappers_pb2
from google.protobuf.descriptor import Descriptor
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.support.wire_draw import message_bytes

# Every scalar type the wrappers hold, enums, packed repeated ints (Location's path and
# span), proto2 messages, and the JSON-like recursion of Struct.
DESCRIPTORS = [
    *(
        getattr(wrappers_pb2, name).DESCRIPTOR
        for name in (
            "DoubleValue",
            "FloatValue",
            "Int64Value",
            "UInt64Value",
            "Int32Value",
            "UInt32Value",
            "BoolValue",
            "StringValue",
            "BytesValue",
        )
    ),
    descriptor_pb2.SourceCodeInfo.Location.DESCRIPTOR,
    descriptor_pb2.FieldDescriptorProto.DESCRIPTOR,
    struct_pb2.Struct.DESCRIPTOR,
]


@pytest.mark.parametrize("desc", DESCRIPTORS, ids=lambda d: d.name)
@settings(max_examples=50, deadline=None)
@given(data=st.data())
def test_the_runtime_reads_every_drawn_message(desc: Descriptor, data: st.DataObject) -> None:
    # A drawing the runtime refused would test nothing: every arrangement must parse.
    raw = data.draw(message_bytes(desc, 3))
    message_factory.GetMessageClass(desc).FromString(raw)
