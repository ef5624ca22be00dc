"""Big requests read without holding the event loop.

grpc parses a request on the event loop before its handler runs: a 32 MB RunSuite held
the loop ~30 ms (and every other caller with it) just to become a message, and its
cases were then serialized again, one by one, to go to the scoring workers. RunSuite and
RunSuiteStream requests therefore arrive as bytes (`registration.add_service(raw=...)`):
`split` finds the cases by a scan of the message's fields (`scoring.fields`) and leaves
each case as the bytes the caller sent, and the rest, small, is parsed as usual. Each
case is parsed on its own when it is checked, between turns of the event loop
(`CASES_PER_TURN`), and goes to a worker as the same bytes.

The scan reads the wire format by hand, so `tests/server/test_intake.py` holds it to
the protobuf runtime on requests drawn from the message descriptors: every field, in
any order, repeated, with unknown fields of every wire type, and truncated or corrupted.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from google.protobuf.descriptor import Descriptor
from google.protobuf.message import Message
from scorewire.scoring import fields
from scorewire.server.status import undecodable
from scorewire.v1 import scoring_pb2 as pb

M = TypeVar("M", bound=Message)


def _path(message: Descriptor, *names: str) -> tuple[tuple[int, ...], tuple[frozenset[int], ...]]:
    """The field numbers from `message` down along `names`, and at each level the other
    members of the oneof the field is in (what replaces it, `fields.split`)."""
    numbers, resets = [], []
    desc: Descriptor | None = message
    for name in names:
        assert desc is not None, "the path goes through messages"
        field = desc.fields_by_name[name]
        oneof = field.containing_oneof
        others = {f.number for f in oneof.fields} - {field.number} if oneof else set()
        numbers.append(field.number)
        resets.append(frozenset(others))
        desc = field.message_type
    return tuple(numbers), tuple(resets)


RUN_SUITE_CASES = _path(pb.RunSuiteRequest.DESCRIPTOR, "cases")
"""Where a RunSuiteRequest's cases are: its `cases` field."""
STREAM_CONFIG_CASES = _path(pb.RunSuiteStreamRequest.DESCRIPTOR, "config", "request", "cases")
"""Where the cases of a RunSuiteStream's first message are: config.request.cases."""
STREAM_CHUNK_CASES = _path(pb.RunSuiteStreamRequest.DESCRIPTOR, "cases", "cases")
"""Where the cases of a later RunSuiteStream message are: cases.cases."""

FIELDS_PER_TURN = 1024
"""Fields scanned between two turns of the event loop."""
CASES_PER_TURN = 256
"""Cases parsed between two turns of the event loop."""


async def split(
    raw: bytes, path: tuple[tuple[int, ...], tuple[frozenset[int], ...]]
) -> tuple[bytes, list[memoryview]]:
    """The message without its cases, and each case's bytes, found along `path` (field
    numbers from the message down to its repeated `Case` field); INVALID_ARGUMENT, as
    for any request that does not parse, when the bytes end inside a field."""
    try:
        return await fields.split(raw, path[0], path[1], FIELDS_PER_TURN, parse_case)
    except fields.Truncated:
        raise undecodable("DecodeError: truncated message") from None


def parse_case(data: memoryview | bytes) -> pb.Case:
    """One case from its bytes; INVALID_ARGUMENT when they do not parse."""
    try:
        return pb.Case.FromString(data)  # type: ignore[arg-type]  # upb reads any buffer
    except Exception as err:
        raise undecodable(f"{type(err).__name__}: {err}") from None


def parse(cls: type[M], data: bytes, screen: Callable[[bytes], Any] | None = None) -> M:
    """The message of `cls` from what `split` left of it, refused first by `screen`
    (`server.screening`) when its strings are surely over their limits."""
    refused = screen(data) if screen is not None else None
    if refused is not None:
        raise refused
    try:
        return cls.FromString(data)
    except Exception as err:
        raise undecodable(f"{type(err).__name__}: {err}") from None
