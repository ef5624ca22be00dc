"""The check registry: every check type with its description and parameter schema.

A check type is a typed parameter model (unknown keys rejected) plus a factory that
binds validated parameters once and returns the scoring function. Families register
their types at import; `ListChecks` serves the registry to clients.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

from pydantic import BaseModel, ConfigDict
from scorewire.core.model import Output, Sample, Score

if TYPE_CHECKING:
    from scorewire.core.context import CheckContext

SyncCheckFn = Callable[[Sample, Output, "CheckContext"], Score]
AsyncCheckFn = Callable[[Sample, Output, "CheckContext"], Awaitable[Score]]
CheckFn = SyncCheckFn | AsyncCheckFn

P = TypeVar("P", bound="Params")


class Params(BaseModel):
    """Base of every check's parameter model: unknown keys are errors, models are frozen.

    Integers are validated in lax mode on purpose: numbers in a protobuf Struct arrive as
    doubles, so `2.0` must be accepted for an integer field while `2.5` is rejected.
    NaN and infinities are refused (a Struct and YAML can carry them): a threshold,
    tolerance, budget or timeout of `.nan` or `.inf` is a load error at its path.
    """

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)


class NoParams(Params):
    """Parameters of a check that takes none."""


class ParamError(Exception):
    """Raised by a check factory when parameters are well-typed but unusable.

    `field` is the dotted path inside the check's parameters (`pattern`, `schema.items`),
    so the loader can report `checks[2].params.pattern`.
    """

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field
        self.message = message


@dataclass(slots=True)
class CheckType:
    """One registered check type."""

    name: str
    """The key used in suites and requests (`contains`, `trajectory.max_steps`)."""
    description: str
    """One line for people, served by ListChecks."""
    family: str
    """The module family: deterministic, safety, trajectory, judge, rag, ..."""
    params: type[Params]
    """The parameter model; its JSON Schema is the check's parameter schema."""
    build: Callable[[Any], CheckFn]
    """Factory: validated params -> scoring function."""
    is_async: bool = False
    """True when the scoring function is a coroutine function (judge-backed checks)."""
    uses_judge: bool = False
    """True when the check calls a model and so spends budget."""
    self_testable: bool = True
    """Whether positive/negative examples are run against the check at load time."""
    aliases: tuple[str, ...] = field(default_factory=tuple)
    """Other names the same type answers to."""

    def params_schema(self) -> dict[str, Any]:
        """The JSON Schema of the parameters (cached by pydantic)."""
        return self.params.model_json_schema()


class Registry:
    """A name -> CheckType map. The process has one default registry, `REGISTRY`."""

    def __init__(self) -> None:
        self._types: dict[str, CheckType] = {}

    def add(self, check_type: CheckType, *, replace: bool = False) -> None:
        """Register a type; a second type under a taken name is an error unless `replace`."""
        for key in (check_type.name, *check_type.aliases):
            if key in self._types and not replace:
                raise ValueError(f"check type {key!r} is already registered")
            self._types[key] = check_type

    def remove(self, name: str) -> None:
        """Forget a type (used when a custom-check module is re-imported)."""
        self._types.pop(name, None)

    def get(self, name: str) -> CheckType | None:
        """The type registered under `name`, or None."""
        return self._types.get(name)

    def names(self) -> list[str]:
        """Every registered name, sorted."""
        return sorted(self._types)

    def types(self) -> list[CheckType]:
        """Every distinct type, sorted by name (aliases not repeated)."""
        seen: dict[str, CheckType] = {}
        for t in self._types.values():
            seen.setdefault(t.name, t)
        return [seen[k] for k in sorted(seen)]


REGISTRY = Registry()


def check_type(
    name: str,
    *,
    description: str,
    family: str,
    params: type[P],
    uses_judge: bool = False,
    self_testable: bool = True,
    aliases: tuple[str, ...] = (),
    registry: Registry | None = None,
) -> Callable[[Callable[[P], CheckFn]], Callable[[P], CheckFn]]:
    """Decorator registering a check factory `build(params) -> scoring function`.

    The factory is called once per check spec, so it is the place to compile regexes
    and schemas; the function it returns runs once per sample.
    """

    def decorate(build: Callable[[P], CheckFn]) -> Callable[[P], CheckFn]:
        # Whether the type is async is read from the factory's return annotation at
        # build time instead (see `is_async_fn`); here it is declared by uses_judge.
        (registry or REGISTRY).add(
            CheckType(
                name=name,
                description=description,
                family=family,
                params=params,
                build=build,
                is_async=uses_judge,
                uses_judge=uses_judge,
                self_testable=self_testable and not uses_judge,
                aliases=aliases,
            )
        )
        return build

    return decorate


def is_async_fn(fn: Callable[..., Any]) -> bool:
    """True when calling `fn` returns an awaitable that must be awaited."""
    return inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(
        getattr(fn, "__call__", None)  # noqa: B004 - callable objects with async __call__
    )
