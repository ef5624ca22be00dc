"""The check registry: every check type with its description, parameters and costs.

A check type is a typed parameter model (unknown keys rejected) plus a factory that
binds validated parameters once and returns the scoring function. Families register
their types at import, each declaring beside its handler what the engine needs to know
of it: its threshold rule, its negation, what its costly parameters cost (see
`core.charges`) and whether it reads the whole output. `ListChecks` serves the registry
to clients.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

from pydantic import BaseModel, ConfigDict
from scorewire.core.cost import RequestMeter
from scorewire.core.model import Output, Sample, Score

if TYPE_CHECKING:
    from scorewire.core.context import CheckContext

SyncCheckFn = Callable[[Sample, Output, "CheckContext"], Score]
AsyncCheckFn = Callable[[Sample, Output, "CheckContext"], Awaitable[Score]]
CheckFn = SyncCheckFn | AsyncCheckFn

P = TypeVar("P", bound="Params")


FAMILIES: Mapping[str, tuple[str, ...]] = {
    "deterministic": ("reference", "output_form", "python_function"),
    "safety": ("safety",),
    "trajectory": ("trajectory",),
    "compact": ("compact",),
    "judge": ("judge", "judge_assertions"),
    "rag": ("rag",),
    "comparison": ("comparison",),
    "human": ("human",),
    "text": ("text_metrics",),
    "custom": (),
}
"""Every check family a type may belong to (the name ListChecks serves), with the
modules of `scorewire.checks` that register its built-in types, imported in this order
by that package. `custom` is the server owner's checks (`engine.custom`): no module."""


class Params(BaseModel):
    """Base of every check's parameter model: unknown keys are errors, models are frozen.

    A parameter is documented by `Field(description=...)` or by a docstring under the
    attribute (`use_attribute_docstrings`): either becomes its description in the JSON
    Schema that ListChecks serves, and `tests/checks/test_registry.py` requires one.

    Integers are validated in lax mode on purpose: numbers in a protobuf Struct arrive as
    doubles, so `2.0` must be accepted for an integer field while `2.5` is rejected.
    NaN and infinities are refused (a Struct and YAML can carry them): a threshold,
    tolerance, budget or timeout of `.nan` or `.inf` is a load error at its path.
    """

    model_config = ConfigDict(
        extra="forbid", frozen=True, use_attribute_docstrings=True, allow_inf_nan=False
    )


class NoParams(Params):
    """Parameters of a check that takes none."""


ThresholdPhrase = Callable[[float, bool, float], str]
"""(value, passed, threshold) -> the words between a Measurement's stem and tail."""


@dataclass(frozen=True, slots=True)
class ThresholdRule:
    """Declares that a family's checks yield a value which passes at value ≥ threshold.

    The engine applies it once, when it compiles a spec (`engine.passing`): the check
    returns a `Measurement` and never reads its `threshold` parameter. The parameter
    itself stays in the family's parameter model, so its description and default are
    served with the others; the registry refuses a rule whose model has no `threshold`
    or a different default.
    """

    default: float | None
    """The threshold when the spec gives none (or null); None leaves the check's own
    verdict standing (`judge` without `threshold` passes at its `pass_level`)."""
    phrase: ThresholdPhrase
    """How the reason states the comparison, so each family keeps its wording."""
    slack: float = 0.0
    """Tolerance below the threshold that still passes (judge levels: 0.75 ≥ 0.75)."""


Charge = Callable[[RequestMeter, Any, str], None]
"""What a raw parameter costs: (meter, the value as the caller wrote it, its field path)
-> None, raising `LimitExceeded` over a limit; a value of the wrong type costs nothing
(validation reports it). The charges are in `core.charges`."""


@dataclass(frozen=True, slots=True)
class Uncosted:
    """Declares that a costly parameter (`core.charges.costly_params`) is not metered when
    a request loads, and why."""

    reason: str
    """What bounds it instead, for the next reader of the check."""


@dataclass(frozen=True, slots=True)
class WholeText:
    """Declares that a check reads its whole output once per case (token counting, text
    metrics), so each case's output counts toward `max_metric_input_bytes_per_case`."""

    max_chars: int | None = None
    """The longest output it reads: it refuses a longer one cheaply (an error score), so
    that one costs nothing. None: it reads an output of any length."""


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
    """The module family, one of `FAMILIES`."""
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
    threshold: ThresholdRule | None = None
    """Set when the check yields a value that the engine passes at a threshold."""
    negated_by: str | None = None
    """A boolean parameter (default true) whose false inverts the result, in the engine
    (`regex`'s `must_match`)."""
    alias_of: str | None = None
    """Set on another spelling of a canonical type whose parameters have another shape
    (the compact `contains_text {value}` of `contains {needles}`): it validates its own
    parameters, scores through the canonical type, and results name the canonical type."""
    in_process_only: bool = False
    """True for a type that cannot be used over the wire (`python` takes a function)."""
    costs: Mapping[str, Charge | Uncosted] = field(default_factory=dict)
    """What each costly raw parameter (by the name a caller writes) costs the request's
    meter, charged in this order before the spec compiles (`engine.metering`), or why it
    needs no charge; `core.charges.require_metering` refuses a costly one left out."""
    reads_whole_text: WholeText | None = None
    """Set when the check reads its whole output once per case (`engine.metering`)."""

    def __post_init__(self) -> None:
        # An incomplete definition is refused at import, where its author sees it.
        fields = self.params.model_fields
        if self.threshold is not None:
            param = fields.get("threshold")
            if param is None:
                raise ValueError(f"check type {self.name!r} has a threshold rule but no parameter")
            if param.default not in (None, self.threshold.default):
                raise ValueError(
                    f"check type {self.name!r}: the threshold parameter defaults to "
                    f"{param.default!r}, the rule to {self.threshold.default!r}"
                )
        if self.negated_by is not None:
            param = fields.get(self.negated_by)
            if param is None or param.default is not True:
                raise ValueError(
                    f"check type {self.name!r}: {self.negated_by!r} must be a parameter "
                    "defaulting to true"
                )
        names = {f.alias or n for n, f in fields.items()}
        for key in self.costs:
            if key not in names:
                raise ValueError(
                    f"check type {self.name!r} declares a cost for {key!r}, not a parameter"
                )

    @property
    def charges(self) -> dict[str, Charge]:
        """The metered parameters and their charges, in the order they are charged."""
        return {k: c for k, c in self.costs.items() if not isinstance(c, Uncosted)}

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
        """Every canonical type, sorted by name (aliases and alias types not repeated)."""
        seen: dict[str, CheckType] = {}
        for t in self._types.values():
            if t.alias_of is None:
                seen.setdefault(t.name, t)
        return [seen[k] for k in sorted(seen)]

    def alias_types(self) -> list[CheckType]:
        """Every alias type (another spelling with its own parameters), sorted by name."""
        return sorted(
            {id(t): t for t in self._types.values() if t.alias_of is not None}.values(),
            key=lambda t: t.name,
        )

    def aliases_of(self, name: str) -> list[str]:
        """Every other name that scores as the canonical type `name`, sorted."""
        out = {
            key
            for key, t in self._types.items()
            if key != name and (t.name == name or t.alias_of == name)
        }
        return sorted(out)


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
    threshold: ThresholdRule | None = None,
    negated_by: str | None = None,
    in_process_only: bool = False,
    costs: Mapping[str, Charge | Uncosted] | None = None,
    reads_whole_text: WholeText | None = None,
    registry: Registry | None = None,
) -> Callable[[Callable[[P], CheckFn]], Callable[[P], CheckFn]]:
    """Decorator registering a check factory `build(params) -> scoring function`.

    The factory is called once per check spec, so it is the place to compile regexes
    and schemas; the function it returns runs once per sample. A family whose checks
    yield a value declares `threshold`; one whose result a flag inverts declares
    `negated_by`. The engine applies both, so the check only measures. `costs` and
    `reads_whole_text` say what the check costs a request (see `CheckType`).
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
                threshold=threshold,
                negated_by=negated_by,
                in_process_only=in_process_only,
                costs=costs or {},
                reads_whole_text=reads_whole_text,
            )
        )
        return build

    return decorate


def alias_type(
    name: str,
    *,
    of: str,
    params: type[P],
    adapt: Callable[[P], dict[str, Any]],
    description: str,
    validate: Callable[[P], None] | None = None,
    costs: Mapping[str, Charge | Uncosted] | None = None,
    reads_whole_text: WholeText | None = None,
    registry: Registry | None = None,
) -> None:
    """Register `name` as another spelling of the canonical type `of`.

    The alias keeps its own parameter model (so errors name what the caller wrote, and
    `validate` may add the alias's own limits); `adapt` turns its parameters into the
    canonical type's, whose factory then builds the one implementation of the concept.
    Results name the canonical type; ListChecks lists the alias under it. The alias
    declares its own `costs` and `reads_whole_text`: its parameters are its own, and
    the options it sets may cost more than the canonical type's defaults (`word_count`
    counts every word of the output).
    """
    reg = registry or REGISTRY
    canonical = reg.get(of)
    if canonical is None or canonical.alias_of is not None:
        raise ValueError(f"alias {name!r}: {of!r} is not a registered canonical type")

    def build(p: P) -> CheckFn:
        if validate is not None:
            validate(p)
        return canonical.build(canonical.params.model_validate(adapt(p)))

    reg.add(
        CheckType(
            name=name,
            description=description,
            family=canonical.family,
            params=params,
            build=build,
            is_async=canonical.is_async,
            uses_judge=canonical.uses_judge,
            self_testable=canonical.self_testable,
            alias_of=of,
            costs=costs or {},
            reads_whole_text=reads_whole_text,
        )
    )


def is_async_fn(fn: Callable[..., Any]) -> bool:
    """True when calling `fn` returns an awaitable that must be awaited."""
    return inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(
        getattr(fn, "__call__", None)  # noqa: B004 - callable objects with async __call__
    )
