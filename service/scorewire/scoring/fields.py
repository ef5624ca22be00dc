"""A message's fields read from its wire format by hand: its cases found without parsing it.

A RunSuite of 40,000 cases is one message of tens of megabytes; parsing it whole holds
the thread that parses for as long as that takes, and turns every case into an object
that is serialized again to go to a scoring worker. `split` instead walks the message's
top-level fields (tag, wire type, length), keeps the bytes of each value of one repeated
field (nested along a path of field numbers), and re-encodes what is left, to be parsed
as usual. It gives the event loop a turn every `per_turn` fields.

Only the framing is read (varints, fixed widths, lengths, groups); values are never
interpreted. `tests/server/test_intake.py` holds it to the protobuf runtime on messages
drawn from the descriptors. `result_bodies` reads a scoring worker's own answer back the
same way: the results the native kernel wrote, one by one.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator, Sequence

MAX_DEPTH = 100
"""Deepest nesting of groups read (protobuf's own limit for messages)."""


class Truncated(ValueError):
    """The bytes end inside a field (or are not the wire format at all)."""


_LENGTH_DELIMITED = 2


def _varint(data: memoryview, i: int) -> tuple[int, int]:
    """The varint at `i` and the position after it."""
    shift = result = 0
    while True:
        if i >= len(data) or shift > 63:
            raise Truncated
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
        return _skip_group(data, i, number)
    else:
        raise Truncated
    if end > len(data):
        raise Truncated
    return end


def _skip_group(data: memoryview, i: int, number: int) -> int:
    """The position after a group's end tag (its fields start at `i`); groups nest, so
    the open ones are kept on a list rather than the stack, at most `MAX_DEPTH` deep."""
    open_groups = [number]
    while open_groups:
        tag, i = _varint(data, i)
        wire_type, field = tag & 7, tag >> 3
        if wire_type == 4:
            if field != open_groups.pop():
                raise Truncated
        elif wire_type == 3:
            if len(open_groups) >= MAX_DEPTH:
                raise Truncated
            open_groups.append(field)
        else:
            i = _skip(data, i, wire_type, field)
    return i


def result_bodies(message: bytes) -> list[bytes]:
    """The serialized `CaseResult`s of a serialized `RunSuiteResponse` that holds only
    results (`RunSuiteResponse.results = 1`, `CaseResultBatch.results = 1`), as
    `wire.case_results_message` and the native kernel write one."""
    bodies: list[bytes] = []
    if not message:
        return bodies
    view = memoryview(message)
    _, at = _varint(view, 1)  # the batch's tag, then its length
    while at < len(view):
        length, at = _varint(view, at + 1)  # each result's tag, then its length
        bodies.append(bytes(view[at : at + length]))
        at += length
    return bodies


def _encode_varint(n: int) -> bytes:
    out = bytearray()
    while n > 0x7F:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def walk(data: memoryview) -> Iterator[tuple[int, int, int, int, int]]:
    """Each field of the message `data`: (number, wire type, where the field starts,
    where its value starts, where it ends), a length-delimited value being its bytes;
    Truncated when the bytes end inside a field or hold a tag no message has."""
    i, n = 0, len(data)
    while i < n:
        start = i
        tag, i = _varint(data, i)
        wire_type, number = tag & 7, tag >> 3
        if number == 0 or wire_type == 4:
            raise Truncated
        if wire_type == _LENGTH_DELIMITED:
            length, body = _varint(data, i)
            i = body + length
            if i > n:
                raise Truncated
            yield number, wire_type, start, body, i
        else:
            i = _skip(data, i, wire_type, number)
            yield number, wire_type, start, i, i


class _Scan:
    """One request's scan, counting fields so that it can give the event loop turns."""

    def __init__(self, per_turn: int) -> None:
        self.per_turn = per_turn
        self.fields = 0
        self.cases: list[memoryview] = []
        self.dropped: list[memoryview] = []
        """Cases of a oneof member that a later member replaced: the runtime reads them
        (and refuses a message whose bytes there do not parse) before dropping them."""

    async def message(
        self, data: memoryview, path: Sequence[int], resets: Sequence[frozenset[int]]
    ) -> bytes:
        """The message without its fields along `path` (the last one's values are kept
        in `cases`); a message on the way is re-encoded around what is left of it. A
        message field of `resets[0]` (another member of the oneof the path's field is
        in) drops the cases found here so far, as the runtime drops that member (with
        another wire type it is an unknown field, as the runtime reads it)."""
        out: list[bytes | memoryview] = []
        number, mark = path[0], len(self.cases)
        for field, wire_type, start, body, end in walk(data):
            if field in resets[0] and wire_type == _LENGTH_DELIMITED:
                self.dropped.extend(self.cases[mark:])
                del self.cases[mark:]
            if field != number or wire_type != _LENGTH_DELIMITED:
                out.append(data[start:end])
            elif len(path) == 1:
                self.cases.append(data[body:end])
            else:
                inner = await self.message(data[body:end], path[1:], resets[1:])
                out.append(data[start : body - len(_encode_varint(end - body))])
                out.append(_encode_varint(len(inner)))
                out.append(inner)
            self.fields += 1
            if self.fields % self.per_turn == 0:
                await asyncio.sleep(0)
        return b"".join(out)


async def split(
    raw: bytes,
    path: Sequence[int],
    resets: Sequence[frozenset[int]],
    per_turn: int,
    check: Callable[[memoryview], object],
) -> tuple[bytes, list[memoryview]]:
    """The message without its fields along `path` (field numbers from the message down
    to a repeated message field), and each value of that last field, as bytes; at each
    level, `resets` are the other members of the oneof the path's field is in (empty
    when it is in none). Truncated when the bytes end inside a field.

    A case that a later member of a oneof replaced is not returned but checked: it must
    still be a case's bytes (`check`), as the runtime reads it before dropping it."""
    scan = _Scan(per_turn)
    rest = await scan.message(memoryview(raw), path, resets)
    for case in scan.dropped:
        check(case)
    return rest, scan.cases
