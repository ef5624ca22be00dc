"""Big requests read without holding the event loop.

grpc parses a request on the event loop before its handler runs: a 32 MB RunSuite held
the loop ~30 ms (and every other caller with it) just to become a message, and its
cases were then serialized again, one by one, to go to the scoring workers. RunSuite and
RunSuiteStream requests therefore arrive as bytes (`registration.add_service(raw=...)`):
`split` finds the cases by a scan of the message's fields and leaves each case as the
bytes the caller sent, and the rest, small, is parsed as usual. Each case is parsed on
its own when it is checked, between turns of the event loop (`CASES_PER_TURN`), and
goes to a worker as the same bytes.

The scan reads the wire format by hand, so `tests/server/test_intake.py` holds it to
the protobuf runtime on requests drawn from the message descriptors: every field, in
any order, repeated, with unknown fields of every wire type, and truncated or corrupted.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import TypeVar

from google.protobuf.message import Message
from scorewire.server.errors import undecodable
from scorewire.v1 import scoring_pb2 as pb

M = TypeVar("M", bound=Message)

RUN_SUITE_CASES = (pb.RunSuiteRequest.DESCRIPTOR.fields_by_name["cases"].number,)
"""Where a RunSuiteRequest's cases are: its `cases` field."""
STREAM_CONFIG_CASES = (
    pb.RunSuiteStreamRequest.DESCRIPTOR.fields_by_name["config"].number,
    pb.RunSuiteStreamConfig.DESCRIPTOR.fields_by_name["request"].number,
    *RUN_SUITE_CASES,
)
"""Where the cases of a RunSuiteStream's first message are: config.request.cases."""
STREAM_CHUNK_CASES = (
    pb.RunSuiteStreamRequest.DESCRIPTOR.fields_by_name["cases"].number,
    pb.CaseChunk.DESCRIPTOR.fields_by_name["cases"].number,
)
"""Where the cases of a later RunSuiteStream message are: cases.cases."""

FIELDS_PER_TURN = 4096
"""Fields scanned between two turns of the event loop."""
CASES_PER_TURN = 256
"""Cases parsed between two turns of the event loop."""

_LENGTH_DELIMITED = 2


class _Truncated(Exception):
    """The bytes end inside a field."""


def _varint(data: memoryview, i: int) -> tuple[int, int]:
    """The varint at `i` and the position after it."""
    shift = result = 0
    while True:
        if i >= len(data) or shift > 63:
            raise _Truncated
        b = data[i]
        i += 1
        result |= (b & 0x7F) << shift
        if b < 0x80:
            return result, i
        shift += 7


def _skip(data: memoryview, i: int, wire_type: int, number: int) -> int:
    """The position after a field's value that starts at `i`."""
    if wire_type == 0:
        return _varint(data, i)[1]
    if wire_type == 1:
        end = i + 8
    elif wire_type == _LENGTH_DELIMITED:
        length, i = _varint(data, i)
        end = i + length
    elif wire_type == 5:
        end = i + 4
    elif wire_type == 3:  # a group: its fields, then the end-group tag of its number
        while True:
            tag, i = _varint(data, i)
            if tag & 7 == 4:
                if tag >> 3 != number:
                    raise _Truncated
                return i
            i = _skip(data, i, tag & 7, tag >> 3)
    else:
        raise _Truncated
    if end > len(data):
        raise _Truncated
    return end


def _encode_varint(n: int) -> bytes:
    out = bytearray()
    while n > 0x7F:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


class _Scan:
    """One request's scan, counting fields so that it can give the event loop turns."""

    def __init__(self) -> None:
        self.fields = 0
        self.cases: list[memoryview] = []

    async def message(self, data: memoryview, path: Sequence[int]) -> bytes:
        """The message without its fields along `path` (the last one's values are kept
        in `cases`); a message on the way is re-encoded around what is left of it."""
        out: list[bytes | memoryview] = []
        i, n, number = 0, len(data), path[0]
        while i < n:
            start = i
            tag, i = _varint(data, i)
            wire_type, field = tag & 7, tag >> 3
            if field == 0 or wire_type == 4:
                raise _Truncated
            if field != number or wire_type != _LENGTH_DELIMITED:
                i = _skip(data, i, wire_type, field)
                out.append(data[start:i])
            else:
                length, body = _varint(data, i)
                i = body + length
                if i > n:
                    raise _Truncated
                value = data[body:i]
                if len(path) == 1:
                    self.cases.append(value)
                else:
                    inner = await self.message(value, path[1:])
                    out.append(data[start : body - len(_encode_varint(length))])
                    out.append(_encode_varint(len(inner)))
                    out.append(inner)
            self.fields += 1
            if self.fields % FIELDS_PER_TURN == 0:
                await asyncio.sleep(0)
        return b"".join(out)


async def split(raw: bytes, path: Sequence[int]) -> tuple[bytes, list[memoryview]]:
    """The message without its cases, and each case's bytes, found along `path` (field
    numbers from the message down to its repeated `Case` field); INVALID_ARGUMENT, as
    for any request that does not parse, when the bytes end inside a field."""
    scan = _Scan()
    try:
        rest = await scan.message(memoryview(raw), path)
    except _Truncated:
        raise undecodable("DecodeError: truncated message") from None
    return rest, scan.cases


def parse_case(data: memoryview | bytes) -> pb.Case:
    """One case from its bytes; INVALID_ARGUMENT when they do not parse."""
    try:
        return pb.Case.FromString(data)  # type: ignore[arg-type]  # upb reads any buffer
    except Exception as err:
        raise undecodable(f"{type(err).__name__}: {err}") from None


def parse(cls: type[M], data: bytes) -> M:
    """The message of `cls` from what `split` left of it."""
    try:
        return cls.FromString(data)
    except Exception as err:
        raise undecodable(f"{type(err).__name__}: {err}") from None


async def parse_cases(cases: Sequence[memoryview]) -> list[pb.Case]:
    """Every case parsed, giving the event loop turns (for the paths that keep them)."""
    out = []
    for i, data in enumerate(cases, 1):
        out.append(parse_case(data))
        if i % CASES_PER_TURN == 0:
            await asyncio.sleep(0)
    return out
