"""Native twins: what a check's factory tells the native kernel about the function it built.

A deterministic check whose common path the kernel (`scorewire.engine.native`) can answer
natively says so by attaching a description to its scoring function: the kind of twin
and the parameters it was bound with (`with_twin`). The kernel answers exactly as the
function would, or hands the case back to the function itself, so a description only
ever changes speed. A function without one always runs in Python.
"""

from __future__ import annotations

from typing import Any, TypeVar

F = TypeVar("F")

TWIN_ATTR = "native_twin"


def with_twin(fn: F, kind: str, **params: Any) -> F:
    """`fn`, described for the native kernel as a `kind` twin bound with `params`."""
    setattr(fn, TWIN_ATTR, {"kind": kind, **params})
    return fn


def twin_of(fn: object) -> dict[str, Any] | None:
    """The native twin description of a scoring function, or None."""
    desc = getattr(fn, TWIN_ATTR, None)
    return desc if isinstance(desc, dict) else None
