"""Assertions of the checkllm YAML format (seed `001_…`) as scorewire check specs.

Four of the format's deterministic types are catalog checks under other names or
parameters; they are rewritten here rather than registered twice:

| format | check spec |
|---|---|
| `contains {value}` | `contains {needles: [value]}` |
| `regex {value}` | `regex {pattern: value}` |
| `exact_match {value}` | `exact {expected: value, strip: false}` |
| `no_pii` | `safety.no_pii` |

Every other type (`not_contains`, `max_tokens`, `bleu`, the judge types...) is already
registered under the format's name and passes through with its keys as parameters.
Keys beside `type` are the parameters (there is no `params:` level), so a violation is
reported at `tests[0].assert[1].threshold`. The spec is named after the format's type.

The seed's words are kept: `exact_match` is "Output exactly equals value", so the output
is compared verbatim (the catalog's `exact` strips white space by default; `"Paris\\n"`
is not `Paris`), case-sensitively like every text assertion of the format.

Choices where the format is silent: a mapped type's other keys pass through to the
catalog check (`contains` with `case_sensitive: false` works, and so does `exact_match`
with `strip: true`); `value` must then be a string, and a mapped type given its catalog
key instead (`contains` with `needles`) is passed through as written.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from scorewire.core.errors import FieldViolation, SpecError, join_path
from scorewire.core.registry import Registry
from scorewire.engine.spec import CheckSpec, CompiledCheck, compile_check


@dataclass(frozen=True, slots=True)
class Rename:
    """A format type that is a registered type with `value` under another key."""

    type: str
    """The registered check type."""
    key: str | None
    """Where `value` goes, or None for a type that takes no value."""
    as_list: bool = False
    """Whether `value` becomes a one-item list."""
    defaults: tuple[tuple[str, Any], ...] = ()
    """Catalog parameters the format's meaning fixes, unless the assertion sets them."""


RENAMES: dict[str, Rename] = {
    "contains": Rename("contains", "needles", as_list=True),
    "regex": Rename("regex", "pattern"),
    "exact_match": Rename("exact", "expected", defaults=(("strip", False),)),
    "no_pii": Rename("safety.no_pii", None),
}
"""The format's types that are catalog checks under other parameters (the table above);
`scripts/gen_schemas.py` writes the editor schema of these from it."""


def checkllm_assertion_to_spec(assertion: Any, path: str) -> CheckSpec:
    """The check spec for one `assert:` item; SpecError (under `path`) if it has no type.

    Parameters are not validated here: `compile_check` (or `compile_checkllm_assertion`,
    which also reports renamed keys under the format's names) does that.
    """
    if not isinstance(assertion, Mapping):
        raise SpecError.at(path, "an assertion must be a mapping with a `type`")
    kind = assertion.get("type")
    if not isinstance(kind, str) or not kind.strip():
        raise SpecError.at(join_path(path, "type"), "an assertion needs a `type` (a string)")
    params = {str(k): v for k, v in assertion.items() if k != "type"}
    rename = RENAMES.get(kind)
    if rename is None:
        return CheckSpec(type=kind, params=params, name=kind, params_path="")
    if rename.key is not None and "value" in params:
        value = params.pop("value")
        if not isinstance(value, str):
            raise SpecError.at(join_path(path, "value"), "must be a string (quote it in YAML)")
        params[rename.key] = [value] if rename.as_list else value
    for key, default in rename.defaults:
        params.setdefault(key, default)
    return CheckSpec(type=rename.type, params=params, name=kind, params_path="")


def _format_path(violation: FieldViolation, path: str, kind: str) -> FieldViolation:
    """Report a renamed key (`needles[0]`, `pattern`) as the format's `value`."""
    rename = RENAMES.get(kind)
    if rename is None or rename.key is None:
        return violation
    key = join_path(path, rename.key)
    field = violation.field
    if field == key or field.startswith((f"{key}.", f"{key}[")):
        field = join_path(path, "value")
    return FieldViolation(field, violation.description)


def compile_checkllm_assertion(
    assertion: Any, path: str, *, registry: Registry | None = None
) -> CompiledCheck:
    """Map and compile one assertion; violations name the keys as the YAML file has them."""
    spec = checkllm_assertion_to_spec(assertion, path)
    try:
        return compile_check(spec, path, registry=registry)
    except SpecError as err:
        if "value" not in assertion:  # the catalog's own keys were written: keep them
            raise
        raise SpecError([_format_path(v, path, spec.name) for v in err.violations]) from None
