"""Native twins: what a check's factory tells the native kernel about the function it built.

A deterministic check whose common path the kernel (`scorewire.engine.native`) can answer
natively says so by attaching a description to its scoring function (`with_twin`): one
of the frozen dataclasses below, one per kind of twin, holding the parameters the
function was bound with. The kernel answers exactly as the function would, or hands the
case back to the function itself, so a description only ever changes speed. A function
without one always runs in Python.

The kernel reads each description by its field names (`service/native/src/checks.rs`
declares the fields it reads, and `scorewire_native.twin_fields()` lists them with their
types); `tests/engine/test_twins.py` holds the two to the same names and types, so a field
added on one side only fails a test instead of silently leaving the check to Python.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar, TypeVar

from scorewire.core.values import PathPart

F = TypeVar("F")

TWIN_ATTR = "native_twin"


@dataclass(frozen=True, slots=True, kw_only=True)
class _TwinBase:
    negate: bool = False
    """Invert the twin's verdicts as `engine.passing` inverts the function's
    (`must_match: false`)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ContainsTwin(_TwinBase):
    """`contains`: literal needles, or where the sample's expected value holds them."""

    kind: ClassVar[str] = "contains"
    needles: tuple[str, ...] | None
    """The literal needles, case-folded when `fold`; None: read from the sample."""
    path: tuple[PathPart, ...] | None
    """Where the needles sit in the sample's expected value (None: `must_include`)."""
    require_all: bool
    fold: bool
    """Match case-insensitively (Unicode case folding)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ExactTwin(_TwinBase):
    """`exact`: the reference (a literal, else the sample's expected value at `path`)."""

    kind: ClassVar[str] = "exact"
    literal: Any
    """The literal reference as JSON; None: the sample's expected value."""
    path: tuple[PathPart, ...] | None
    case_sensitive: bool
    strip: bool


@dataclass(frozen=True, slots=True, kw_only=True)
class RegexTwin(_TwinBase):
    """`regex`: the compiled pattern's search, and RE2's direct call when it has one."""

    kind: ClassVar[str] = "regex"
    search: Callable[[str], bool]
    re2_match: tuple[Callable[..., Any], Any] | None
    """`UserRegex.re2_match`: RE2's `Match` and its unanchored mode, or None."""


@dataclass(frozen=True, slots=True, kw_only=True)
class JsonSchemaTwin(_TwinBase):
    """`json_schema`: the JSON Schema document (the kernel takes a subset of them)."""

    kind: ClassVar[str] = "json_schema"
    schema: dict[str, Any]


@dataclass(frozen=True, slots=True, kw_only=True)
class LengthTwin(_TwinBase):
    """`length`: the limits, in code points and words (None: no such limit)."""

    kind: ClassVar[str] = "length"
    max_chars: int | None
    max_words: int | None
    min_chars: int | None


Twin = ContainsTwin | ExactTwin | RegexTwin | JsonSchemaTwin | LengthTwin
"""A native twin's description."""

TWINS: tuple[type[Twin], ...] = (ContainsTwin, ExactTwin, RegexTwin, JsonSchemaTwin, LengthTwin)
"""Every kind of twin the kernel knows."""


def with_twin(fn: F, twin: Twin) -> F:
    """`fn`, described for the native kernel by `twin`."""
    setattr(fn, TWIN_ATTR, twin)
    return fn


def twin_of(fn: object) -> Twin | None:
    """The native twin description of a scoring function, or None."""
    twin = getattr(fn, TWIN_ATTR, None)
    return twin if isinstance(twin, TWINS) else None
