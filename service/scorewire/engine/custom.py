"""Custom checks: Python functions registered on the server side with `@check("name")`.

This is the only way Python code enters scorewire: modules listed under `imports:` (or
`SCOREWIRE_IMPORTS` for the server) are imported by the process that runs them; nothing
that arrives over the wire is ever executed.

A custom function is `fn(sample, output)` or `fn(sample, output, ctx)`, sync or async,
and returns a Score, a bool, or a number in 0..1. A number passes at or above the
check's `threshold` parameter (default 0.5), which the engine applies
(`NUMBER_THRESHOLD`). Synchronous functions run in a worker
thread so that a slow one cannot stall the event loop; the per-check timeout applies.
"""

from __future__ import annotations

import asyncio
import importlib
import inspect
import sys
from collections.abc import Awaitable, Callable, Iterable
from typing import Any

from pydantic import Field
from scorewire.core.context import CheckContext
from scorewire.core.errors import FieldViolation, SpecError, join_path
from scorewire.core.model import Output, Sample, Score
from scorewire.core.registry import REGISTRY, CheckType, Params, Registry
from scorewire.core.values import NUMBER_THRESHOLD, coerce_result

CustomFn = Callable[..., Any]


class CustomParams(Params):
    """Parameters every custom check accepts."""

    threshold: float = Field(0.5, ge=0.0, le=1.0)
    """A numeric result passes at or above this value."""


class DuplicateCheckError(ValueError):
    """A different function was registered under a name that is already taken."""


def _owner(fn: CustomFn) -> tuple[str, str]:
    return (getattr(fn, "__module__", "?"), getattr(fn, "__qualname__", repr(fn)))


def _make_build(name: str, fn: CustomFn) -> Callable[[CustomParams], Any]:
    try:
        n_params = len(inspect.signature(fn).parameters)
    except (TypeError, ValueError):
        n_params = 3
    wants_ctx = n_params >= 3
    is_coro = inspect.iscoroutinefunction(fn)

    def build(params: CustomParams) -> Callable[[Sample, Output, CheckContext], Awaitable[Score]]:
        async def run(sample: Sample, output: Output, ctx: CheckContext) -> Score:
            args: tuple[Any, ...] = (sample, output, ctx) if wants_ctx else (sample, output)
            if is_coro:
                result = await fn(*args)
            else:
                result = await asyncio.to_thread(fn, *args)
            return coerce_result(result, name)

        return run

    return build


def check(
    name: str, *, description: str = "", registry: Registry | None = None
) -> Callable[[CustomFn], CustomFn]:
    """Register `fn` as the custom check type `name`.

    Registering the same function again (its module was re-imported) replaces it; a
    different function under a taken name raises DuplicateCheckError.
    """
    reg = registry or REGISTRY

    def decorate(fn: CustomFn) -> CustomFn:
        existing = reg.get(name)
        if existing is not None:
            prior = getattr(existing.build, "__scorewire_owner__", None)
            if prior != _owner(fn):
                where = "a built-in check" if prior is None else f"{prior[0]}.{prior[1]}"
                raise DuplicateCheckError(
                    f"check {name!r} is already registered by {where}; choose another name"
                )
        build = _make_build(name, fn)
        build.__scorewire_owner__ = _owner(fn)  # type: ignore[attr-defined]
        doc = (inspect.getdoc(fn) or "").strip().splitlines()
        reg.add(
            CheckType(
                name=name,
                description=description or (doc[0] if doc else f"custom check {name}"),
                family="custom",
                params=CustomParams,
                build=build,
                is_async=True,
                uses_judge=False,
                self_testable=False,
                threshold=NUMBER_THRESHOLD,
            ),
            replace=True,
        )
        return fn

    return decorate


def load_imports(modules: Iterable[str], base: str = "imports") -> None:
    """Import (or re-import) the modules of custom checks; errors name the entry.

    Re-importing a module re-runs its decorators, which replace its checks.
    """
    violations = []
    for i, mod in enumerate(modules):
        try:
            if mod in sys.modules:
                importlib.reload(sys.modules[mod])
            else:
                importlib.import_module(mod)
        except DuplicateCheckError as err:
            violations.append((join_path(base, i), str(err)))
        except Exception as err:
            violations.append(
                (join_path(base, i), f"cannot import {mod!r}: {type(err).__name__}: {err}")
            )
    if violations:
        raise SpecError(FieldViolation(f, d) for f, d in violations)
