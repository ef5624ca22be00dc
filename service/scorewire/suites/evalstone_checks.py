"""Checks as an evalstone document writes them: inline mappings and compact lists.

An inline check is `{type: contains, needles: [...], when: {...}}` (modifiers beside the
type's parameters) or the clients' canonical form with the parameters under `params:`;
compact checks are seed 002's one-line strings or its JSON-array form (`compact`). Both
are used by the suite loader (`evalstone`) and the request loader (`evalstone_request`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from scorewire.core.errors import FieldViolation, SpecError, join_path
from scorewire.core.registry import REGISTRY
from scorewire.engine.spec import CheckSpec, CompiledCheck, Example

MODIFIER_KEYS = frozenset({"type", "name", "when", "examples", "extractor"})


def parse_check_spec(raw: object, path: str) -> CheckSpec:
    """A check written inline (`{type: contains, needles: [...], when: {...}}`)."""
    if not isinstance(raw, Mapping):
        raise SpecError.at(path, "a check must be a mapping with a `type:` key")
    violations: list[FieldViolation] = []
    ctype = raw.get("type")
    if not isinstance(ctype, str) or not ctype:
        violations.append(FieldViolation(join_path(path, "type"), "a check needs a `type:`"))
        ctype = ""
    when = None
    if raw.get("when") is not None:
        try:
            when = parse_check_spec(raw["when"], join_path(path, "when"))
        except SpecError as err:
            violations.extend(err.violations)
    examples: list[Example] = []
    try:
        examples = parse_examples(raw.get("examples"), join_path(path, "examples"))
    except SpecError as err:
        violations.extend(err.violations)
    extractor = raw.get("extractor")
    if extractor is not None and not isinstance(extractor, str):
        violations.append(FieldViolation(join_path(path, "extractor"), "must be a string"))
        extractor = None
    # A type with a parameter of a modifier's name (`trajectory.tool_called`'s `name`)
    # takes that key as its parameter; its display name then comes from the `checks:` key
    # or the nested form (`params: {name: ...}` beside a `name:`).
    modifiers = MODIFIER_KEYS - _param_names(ctype) if "params" not in raw else MODIFIER_KEYS
    name = raw.get("name", "") if "name" in modifiers else ""
    if not isinstance(name, str):
        violations.append(FieldViolation(join_path(path, "name"), "must be a string"))
        name = ""
    params = {k: v for k, v in raw.items() if k not in modifiers}
    params_path = ""
    if "params" in params and _nested_params(params, ctype):
        # The clients' canonical form: parameters under `params`, as in the proto.
        nested = params.pop("params")
        if params:
            violations.append(
                FieldViolation(
                    join_path(path, "params"),
                    "give parameters under `params` or beside `type`, not both "
                    f"(found {', '.join(sorted(params))} beside it)",
                )
            )
        elif nested is not None and not isinstance(nested, Mapping):
            violations.append(FieldViolation(join_path(path, "params"), "must be a mapping"))
        else:
            params, params_path = dict(nested or {}), "params"
    if violations:
        raise SpecError(violations)
    return CheckSpec(
        type=ctype,
        params=params,
        name=name,
        when=when,
        examples=examples,
        extractor=extractor,
        params_path=params_path,
    )


def _param_names(ctype: str) -> frozenset[str]:
    check = REGISTRY.get(ctype) if ctype else None
    return frozenset(check.params.model_fields) if check is not None else frozenset()


def _nested_params(params: Mapping[str, Any], ctype: str) -> bool:
    """Whether `params:` holds the parameters rather than being a parameter itself (no
    built-in type has one named so; a custom type that does keeps it)."""
    return "params" not in _param_names(ctype)


def parse_examples(raw: object, path: str) -> list[Example]:
    """`[{text: ..., kind: positive|negative}]`."""
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise SpecError.at(path, "must be a list of {text, kind} mappings")
    out: list[Example] = []
    violations = []
    for i, ex in enumerate(raw):
        where = join_path(path, i)
        if not isinstance(ex, Mapping) or set(ex) - {"text", "kind"}:
            violations.append(FieldViolation(where, "must be a mapping with `text` and `kind`"))
            continue
        text, kind = ex.get("text"), ex.get("kind", "positive")
        if not isinstance(text, str):
            violations.append(FieldViolation(join_path(where, "text"), "must be a string"))
        elif kind not in ("positive", "negative"):
            violations.append(
                FieldViolation(join_path(where, "kind"), "must be `positive` or `negative`")
            )
        else:
            out.append(Example(text, kind))
    if violations:
        raise SpecError(violations)
    return out


def compile_compact(
    raw: object, path: str, violations: list[FieldViolation]
) -> list[CompiledCheck]:
    """Compact checks (one-line strings or the JSON-array form); problems go to `violations`."""
    if raw is None:
        return []
    from scorewire.suites.compact_lines import parse_compact_json, parse_compact_lines

    try:
        if isinstance(raw, str):
            return parse_compact_lines(raw.splitlines(), base=path)
        if isinstance(raw, list) and all(isinstance(x, str) for x in raw):
            return parse_compact_lines(raw, base=path)
        if isinstance(raw, list):
            return parse_compact_json(raw, base=path)
        violations.append(FieldViolation(path, "must be a list of one-line checks"))
    except SpecError as err:
        violations.extend(err.violations)
    return []
