"""Requests refused from their bytes, before they are parsed.

A request with a string field far over what that field may ever hold (a 60 MB compact
line, a suite document over its size limit) is refused here, from the serialized bytes:
parsing it would copy the string (~120 ms for 60 MB, on the event loop, checking its
UTF-8) and reading it would copy it again as a Python string (~85 ms), before the
handler could refuse it. `Screen` walks only the tags and lengths of the fields on the
way to the bounded ones (`fields.walk`), skipping every value, so it costs little
whatever the size; the refusal is the caller's (`Bound.refuse`).

It is a shortcut, not the rule: the handlers check the same limits exactly on the
parsed request (a compact line in characters, say), and the screen only refuses what is
surely over them. Messages under `MIN_BYTES` are not screened (parsing them is cheap),
nor are bytes the screen cannot read (the parser then reports them).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from google.protobuf.descriptor import Descriptor, FieldDescriptor
from scorewire.scoring.fields import Truncated, walk

MIN_BYTES = 64 * 1024
"""Smaller messages are parsed without screening: it would save them little."""

Refusal = Callable[[str, int], Exception]
"""The refusal of a field (its path, `compact[3]`) that is `n` bytes long."""


@dataclass(frozen=True, slots=True)
class Bound:
    """A string field's most bytes, and how a longer one is refused."""

    most_bytes: int
    refuse: Refusal


@dataclass(frozen=True, slots=True)
class _Field:
    name: str
    repeated: bool
    bound: Bound | None
    inner: dict[int, _Field] | None
    """The fields to look into when this is a message field holding bounded ones."""


def _plan(
    message: Descriptor, bounds: Mapping[str, Bound], seen: frozenset[str]
) -> dict[int, _Field]:
    """The fields of `message` that are bounded strings or lead to some, by number."""
    plan: dict[int, _Field] = {}
    for f in message.fields:
        repeated = f.is_repeated
        kind = f.message_type
        if f.type == FieldDescriptor.TYPE_STRING and f.name in bounds:
            plan[f.number] = _Field(f.name, repeated, bounds[f.name], None)
        elif kind is not None and kind.full_name not in seen:
            inner = _plan(kind, bounds, seen | {kind.full_name})
            if inner:
                plan[f.number] = _Field(f.name, repeated, None, inner)
    return plan


class Screen:
    """Refuses a serialized message of one type whose bounded string fields are too long."""

    def __init__(self, message: Descriptor, bounds: Mapping[str, Bound]) -> None:
        self._plan = _plan(message, bounds, frozenset({message.full_name}))

    def __bool__(self) -> bool:
        """Whether the message type has any bounded field to screen."""
        return bool(self._plan)

    def __call__(self, data: bytes) -> Exception | None:
        """The refusal of the first field over its bound, or None."""
        if len(data) < MIN_BYTES:
            return None
        return _scan(memoryview(data), self._plan, "")


def _scan(data: memoryview, plan: Mapping[int, _Field], base: str) -> Exception | None:
    counts: dict[int, int] = {}
    try:
        for number, wire_type, _, body, end in walk(data):
            field = plan.get(number)
            if field is None or wire_type != 2:
                continue
            path = base + field.name
            if field.repeated:
                index = counts.get(number, 0)
                counts[number] = index + 1
                path += f"[{index}]"
            if field.bound is not None and end - body > field.bound.most_bytes:
                return field.bound.refuse(path, end - body)
            if field.inner is not None:
                found = _scan(data[body:end], field.inner, path + ".")
                if found is not None:
                    return found
    except Truncated:
        return None  # not a message: the parser says so
    return None
