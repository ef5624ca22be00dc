"""The twins' descriptions: what the factories attach is what the native kernel reads.

`scorewire.core.twin` declares each kind of twin as a dataclass; the kernel declares the
fields it reads of each (`scorewire_native.twin_fields()`). A field added, renamed or
retyped on one side only would leave every such check silently to Python (or worse), so
the two must list the same kinds, field names and types.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Callable
from typing import Any

import pytest
from scorewire.core.context import CheckContext
from scorewire.core.twin import TWINS, twin_of
from scorewire.engine import native
from scorewire.engine.runner import Plan
from scorewire.engine.spec import CheckSpec, compile_check

from tests.support.components import require_component

if not native.available():
    require_component(
        "the native kernel", "not built here (make install builds service/native with cargo)"
    )

import scorewire_native


def _declared(hint: Any) -> str:
    """A type annotation in the words the kernel declares its field types in."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if hint is Any:
        return "Any"
    if origin in (typing.Union, types.UnionType):
        rest = [a for a in args if a is not type(None)]
        assert len(rest) == 1 and len(args) == 2, f"only `X | None` unions: {hint}"
        return f"{_declared(rest[0])} | None"
    if origin is Callable:
        return "Callable"
    if origin is tuple:
        if len(args) == 2 and args[1] is Ellipsis:
            return f"tuple[{_declared(args[0])}, ...]"
        return "tuple[" + ", ".join(map(_declared, args)) + "]"
    if origin is dict:
        return "dict[" + ", ".join(map(_declared, args)) + "]"
    assert origin is None and isinstance(hint, type), f"not a type the kernel reads: {hint}"
    return hint.__name__


def _python_fields(cls: type) -> dict[str, str]:
    hints = typing.get_type_hints(cls)
    return {f.name: _declared(hints[f.name]) for f in dataclasses.fields(cls)}


def test_every_kind_of_twin_is_read_by_the_kernel() -> None:
    # The same kinds on both sides: a dataclass the kernel does not know, or a kind it
    # reads that no dataclass describes, is a twin that never runs.
    assert {cls.kind for cls in TWINS} == set(scorewire_native.twin_fields())


@pytest.mark.parametrize("cls", TWINS, ids=lambda cls: cls.kind)
def test_each_description_has_the_fields_the_kernel_reads(cls: type) -> None:
    # Every field name and its type, both ways: what Python attaches is what Rust reads.
    kernel = dict(scorewire_native.twin_fields()[cls.kind])
    assert _python_fields(cls) == kernel


@pytest.mark.parametrize(
    ("ctype", "params", "negate"),
    [
        ("contains", {"needles": ["a"]}, False),
        ("exact", {"expected": "a"}, False),
        ("regex", {"pattern": "a"}, False),
        ("regex", {"pattern": "a", "must_match": False}, True),
        ("json_schema", {"schema": {"type": "object"}}, False),
        ("length", {"max_chars": 3}, False),
    ],
)
def test_each_factory_attaches_its_kinds_description(
    ctype: str, params: dict[str, Any], negate: bool
) -> None:
    # The compiled check carries its kind's dataclass (negated by must_match: false), and
    # the kernel takes it as a twin.
    cc = compile_check(CheckSpec(type=ctype, params=params), "checks[0]")
    twin = twin_of(cc.fn)
    assert isinstance(twin, TWINS) and twin.kind == ctype and twin.negate is negate
    kernel = native.build(Plan([cc]), CheckContext())
    assert kernel is not None and kernel.native_checks == 1
