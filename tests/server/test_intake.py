"""server/intake.py's scan of the wire format (`scoring.fields`), held to the runtime.

Requests are drawn from the message descriptors (`tests.support.wire_draw`: every field
of RunSuiteRequest and RunSuiteStreamRequest in any order, singular fields repeated,
repeated scalars packed or not, unknown fields of every wire type), and some are cut
short or corrupted. What `split` keeps must parse to the runtime's message
without its cases, and its cases to the runtime's cases; a request the runtime refuses
must be refused somewhere along the way, and never the other way round.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from google.protobuf.descriptor import Descriptor
from google.protobuf.message import Message
from hypothesis import given, settings
from hypothesis import strategies as st
from scorewire.server import intake
from scorewire.server.status import RequestRejected
from scorewire.v1 import scoring_pb2 as pb

from tests.support.wire_draw import message_bytes


@st.composite
def _wire(draw: st.DrawFn, desc: Descriptor) -> bytes:
    """A message of `desc` drawn in any arrangement the runtime reads
    (`tests.support.wire_draw`), sometimes corrupted (a byte changed) or cut short."""
    data = draw(message_bytes(desc, depth=4))
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


def _split(data: bytes, path: Any) -> tuple[bytes, list[bytes]] | None:
    try:
        rest, cases = asyncio.run(intake.split(data, path))
    except RequestRejected:
        return None
    return rest, [bytes(c) for c in cases]


def _cases_of(msg: Message, path_names: tuple[str, ...]) -> Any:
    for name in path_names:
        msg = getattr(msg, name)
    return msg


def _check(cls: type[Message], data: bytes, path: Any, names: tuple[str, ...]) -> None:
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
    assert left == _without_cases(whole, names)
    if _on_path(whole, names):
        assert parsed == list(_cases_of(whole, names))
    # else a later member of the message's oneof replaced the one holding the cases:
    # the handlers refuse such a message by its kind, whatever cases it had


def _on_path(whole: Message, names: tuple[str, ...]) -> bool:
    """Whether each message on the way to the cases is the member its oneof holds."""
    holder: Any = whole
    for name in names[:-1]:
        oneof = holder.DESCRIPTOR.fields_by_name[name].containing_oneof
        if oneof is not None and holder.WhichOneof(oneof.name) != name:
            return False
        holder = getattr(holder, name)
    return True


def _without_cases(whole: Message, names: tuple[str, ...]) -> Message:
    without = type(whole)()
    without.CopyFrom(whole)
    holder: Any = without
    for name in names[:-1]:  # only where the request has the messages on the way
        if not holder.HasField(name):
            break
        holder = getattr(holder, name)
    else:
        del getattr(holder, names[-1])[:]
    return without


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
    # the field numbers come from the messages, so a renumbered field moves the scan too;
    # a oneof's other members are what replaces the member on the path
    run = pb.RunSuiteRequest.DESCRIPTOR.fields_by_name["cases"]
    assert ((run.number,), (frozenset(),)) == intake.RUN_SUITE_CASES
    assert run.message_type is pb.Case.DESCRIPTOR
    chunk, config = (
        pb.RunSuiteStreamRequest.DESCRIPTOR.fields_by_name[n] for n in ("cases", "config")
    )
    assert intake.STREAM_CHUNK_CASES[1][0] == frozenset({config.number})
    assert intake.STREAM_CONFIG_CASES[1][0] == frozenset({chunk.number})


@pytest.mark.parametrize(
    "data",
    [b"\x32\x05ab", b"\x32", b"\x0a\x80", b"\x00", b"\x1b\x08\x01"],
    ids=["case cut short", "no length", "bad varint", "field 0", "group never ends"],
)
def test_bytes_that_end_inside_a_field_are_refused(data: bytes) -> None:
    assert _split(data, intake.RUN_SUITE_CASES) is None
    assert _parse(pb.RunSuiteRequest, data) is None
