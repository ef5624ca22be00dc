"""Check specs and their compilation: validate once, bind parameters once.

A `CheckSpec` is what a caller writes (type, params, modifiers); `compile_check` turns
it into a `CompiledCheck` whose `fn` runs per sample with nothing left to parse, the
threshold and negation that decide its pass included (`engine.passing`).
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, cast

from pydantic import ValidationError
from scorewire.core.context import EMPTY_CONTEXT
from scorewire.core.cost import LimitExceeded
from scorewire.core.errors import FieldViolation, SpecError, join_path, pydantic_violations
from scorewire.core.model import Output, Sample, Score
from scorewire.core.registry import REGISTRY, CheckFn, CheckType, ParamError, Registry, is_async_fn
from scorewire.engine.metering import charge_spec
from scorewire.engine.passing import bind_pass_rule

ExampleKind = Literal["positive", "negative"]


@dataclass(frozen=True, slots=True)
class Example:
    """An output that should pass (positive) or fail (negative) the check."""

    text: str
    kind: ExampleKind


@dataclass(slots=True)
class CheckSpec:
    """One check as a caller writes it, before validation.

    `params_path` is where the parameters sit in the caller's document: `params` over
    gRPC (`checks[0].params.pattern`), or nothing in a YAML suite whose parameters sit
    beside `type:` (`checks.short.max_words`).
    """

    type: str
    params: Mapping[str, Any] = field(default_factory=dict)
    name: str = ""
    when: CheckSpec | None = None
    examples: Sequence[Example] = ()
    extractor: str | None = None
    params_path: str = "params"


@dataclass(slots=True, eq=False)
class CompiledCheck:
    """A check ready to run: parameters bound, modifiers compiled."""

    name: str
    """The check's name in results (its key, its compact line, or its type)."""
    type: str
    """The canonical type name (an alias's spelling scores as its canonical type)."""
    fn: CheckFn
    """The scoring function built by the type's factory, with the type's threshold and
    negation bound (`engine.passing`)."""
    fn_is_async: bool
    """Whether `fn` must be awaited."""
    check_type: CheckType
    """The registry entry (family, description, whether it uses a judge)."""
    when: CompiledCheck | None = None
    """The predicate of a conditional check, or None."""
    examples: tuple[Example, ...] = ()
    """Positive/negative examples (judge-backed checks put them in the prompt)."""
    extractor: str | None = None
    """What a judge should extract from the output before the check runs on it."""
    model: str | None = None
    """The judge the check names in its `model` parameter (None: the default judge)."""
    panel: tuple[tuple[str, str], ...] = ()
    """The judges of its panel (`judges`) or cascade, as (field path from the check, name
    as written); empty when it names one judge."""

    def judge_models(self) -> list[str]:
        """The judges this check may call, as written (`""` for the default judge): its
        own, its extractor's (always the default) and its predicate's. Read by preflight."""
        return [model for _, model in self.judge_fields()]

    def judge_fields(self) -> list[tuple[str, str]]:
        """`judge_models` with where each is named, as a field path from the check (`""`:
        the check itself; `params.judges[1]`: a judge of its panel)."""
        out: list[tuple[str, str]] = []
        if self.check_type.uses_judge:
            out.extend(self.panel or [("", self.model or "")])
        if self.extractor is not None:
            out.append(("", ""))
        if self.when is not None:
            # a predicate's own judge keeps the check's path, as before panels
            out.extend((join_path("when", f) if f else "", m) for f, m in self.when.judge_fields())
        return out

    @property
    def is_async(self) -> bool:
        """Whether running this check, modifiers included, needs the event loop."""
        return (
            self.fn_is_async
            or self.extractor is not None
            or (self.when is not None and self.when.is_async)
        )

    @property
    def uses_judge(self) -> bool:
        """Whether this check (or its predicate or extractor) may call a judge."""
        return (
            self.check_type.uses_judge
            or self.extractor is not None
            or (self.when is not None and self.when.uses_judge)
        )


def _suggest(name: str, registry: Registry) -> str:
    close = difflib.get_close_matches(name, registry.names(), n=3, cutoff=0.6)
    return f"; did you mean {', '.join(repr(c) for c in close)}?" if close else ""


def compile_check(
    spec: CheckSpec,
    path: str,
    *,
    registry: Registry | None = None,
) -> CompiledCheck:
    """Validate `spec` and bind its parameters; raise SpecError with every problem found.

    `path` is the spec's own location (`checks[2]`, `checks.short`); violations are
    reported below it. Under a request meter (`core.cost.metering`) the spec's cost is
    charged first, and `LimitExceeded` ends the load before anything is compiled.
    """
    reg = registry or REGISTRY
    charge_spec(spec, path)  # refuse a request over its limits before compiling anything
    check_type = reg.get(spec.type)
    if check_type is None:
        raise SpecError.at(
            join_path(path, "type"),
            f"unknown check type {spec.type!r}{_suggest(spec.type, reg)}",
        )
    params_base = join_path(path, spec.params_path) if spec.params_path else path
    violations: list[FieldViolation] = []
    fn: CheckFn | None = None
    try:
        params = check_type.params.model_validate(dict(spec.params))
        fn = check_type.build(params)
    except ValidationError as err:
        violations.extend(pydantic_violations(err, params_base, noun="parameter"))
    except ParamError as err:
        violations.append(FieldViolation(join_path(params_base, err.field), err.message))
    except LimitExceeded as err:  # raised by a factory (a regex's program size)
        raise LimitExceeded(err.setting, join_path(params_base, err.field), err.message) from None

    when: CompiledCheck | None = None
    if spec.when is not None:
        try:
            when = compile_check(spec.when, join_path(path, "when"), registry=reg)
        except SpecError as err:
            violations.extend(err.violations)
    if spec.extractor is not None and not spec.extractor.strip():
        violations.append(FieldViolation(join_path(path, "extractor"), "must name what to extract"))
    if violations or fn is None:
        raise SpecError(violations)

    # Judge-backed checks put their examples into the judge prompt: the factory sees only
    # params, so the engine hands the examples to the bound function once, here.
    bind_examples = getattr(fn, "bind_examples", None)
    if bind_examples is not None and spec.examples:
        bind_examples(tuple(spec.examples))
    fn_is_async = check_type.is_async or is_async_fn(fn)
    compiled = CompiledCheck(
        name=spec.name or spec.type,
        type=check_type.alias_of or check_type.name,
        fn=bind_pass_rule(fn, fn_is_async, check_type, params),
        fn_is_async=fn_is_async,
        check_type=check_type,
        when=when,
        examples=tuple(spec.examples),
        extractor=spec.extractor,
        model=_model_param(params) if check_type.uses_judge else None,
        panel=_panel_param(params, spec.params_path) if check_type.uses_judge else (),
    )
    _self_test(compiled, path)
    return compiled


def _model_param(params: Any) -> str | None:
    model = getattr(params, "model", None)
    return model if isinstance(model, str) and model.strip() else None


def _panel_param(params: Any, params_path: str) -> tuple[tuple[str, str], ...]:
    """The judges a check names in `judges` (a panel) or `cascade`, with their fields."""
    for key in ("judges", "cascade"):
        judges = getattr(params, key, None)
        if isinstance(judges, list):
            where = join_path(params_path, key) if params_path else key
            return tuple((join_path(where, i), str(j)) for i, j in enumerate(judges))
    return ()


def _self_test(compiled: CompiledCheck, path: str) -> None:
    """Run a deterministic check on its own examples: a contradiction is a load error.

    Examples are the check's self-test. They run on the text alone (an empty sample),
    with no `when:` predicate and no extractor, because those need a sample or a judge.
    A check that cannot score an example (it needs the sample's reference) cannot be
    self-tested, which is also reported: a silent skip would hide a useless example.
    """
    if not compiled.examples or compiled.fn_is_async or not compiled.check_type.self_testable:
        return
    if compiled.extractor is not None:
        # The check runs on the extraction, not the raw text, so the examples describe
        # what the extractor should see; they go to the judge prompt instead.
        return
    violations = []
    for i, ex in enumerate(compiled.examples):
        score = cast(Score, compiled.fn(Sample(), Output(text=ex.text), EMPTY_CONTEXT))
        where = join_path(join_path(path, "examples"), i)
        if score.error is not None:
            violations.append(
                FieldViolation(
                    where,
                    f"cannot self-test this example: {score.error.message}",
                )
            )
        elif score.passed != (ex.kind == "positive"):
            want = "pass" if ex.kind == "positive" else "fail"
            got = "passes" if score.passed else "fails"
            violations.append(
                FieldViolation(
                    where,
                    f"{ex.kind} example should {want} the check but {got} it: {score.reason}",
                )
            )
    if violations:
        raise SpecError(violations)


def compile_checks(
    specs: Sequence[CheckSpec], base: str = "checks", *, registry: Registry | None = None
) -> list[CompiledCheck]:
    """Compile a list of specs, gathering the violations of all of them."""
    compiled: list[CompiledCheck] = []
    violations: list[FieldViolation] = []
    for i, spec in enumerate(specs):
        try:
            compiled.append(compile_check(spec, join_path(base, i), registry=registry))
        except SpecError as err:
            violations.extend(err.violations)
    if violations:
        raise SpecError(violations)
    return compiled
