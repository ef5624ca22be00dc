"""JSON Schema validators compiled once per schema, with every regex on RE2.

jsonschema evaluates `pattern`, `patternProperties` and the pattern side of
`additionalProperties` with Python's backtracking `re`; a user schema could hang the
server. Here those keywords are replaced (via `jsonschema.validators.extend`) by versions
that run the patterns on the linear-time engine (`scorewire.regex.engine`) with the
ECMA-262 meaning JSON Schema gives them (`scorewire.regex.ecma`: `\\d`, `\\w`, `\\b`
ASCII, `\\s` Unicode, `$` only at the very end, not before a final newline as in
Python), searched anywhere in the string as the spec says. Every pattern in the document
is compiled at load time, so a pattern the engine cannot honour (a lookahead, say) is a
load error at its path (`schema.properties.code.pattern`).

Choices where the seeds are silent:

- The draft comes from `$schema`; without one it is 2020-12. An unknown `$schema` is a
  load error (jsonschema would warn and silently fall back to the latest draft).
- `format` is an annotation, not an assertion (the 2020-12 default and jsonschema's
  default), in every draft: `"format": "email"` does not fail a non-email string, and a
  format the draft does not define is ignored too. The schema itself is checked against
  its draft's metaschema with that draft's format checkers (draft 3 has its own names,
  `ip-address`, `host-name`, `color`), those whose library is installed, `regex` aside.
- `$ref` resolves only inside the schema document: no network retrieval. A local `$ref`
  (or 2020-12 `$dynamicRef`) that points nowhere, or that is not a string, is a load
  error. Where `referencing` cannot index the document (drafts 3 to 7: `dependencies`
  mixing a schema and a property list, draft 3's single-schema `extends`), a `$ref` to
  an identifier nested in it is a load error too; references by pointer still work.
- Draft 3 takes any string as a type name; an unknown one (`"type": "strng"`) is a load
  error at its path rather than an error on every output. Its `divisibleBy` is exact like
  `multipleOf` (below), which draft 3 does not have (there it is an unknown keyword).
- `additionalItems` applies only beside an array of item schemas: jsonschema raised on
  `items: true`.
- `unevaluatedProperties` together with `patternProperties` is refused at load:
  jsonschema evaluates that pair with Python's `re`, which must not see user patterns.
- `multipleOf` is exact (decimal arithmetic), where jsonschema divides in floats.
- `uniqueItems` hashes a canonical form of each item (linear time) instead of
  jsonschema's pairwise comparison, which is quadratic on arrays of objects: 10,000
  small objects took 83 s there. Equality is JSON Schema's: 1 == 1.0, objects compare
  without regard to key order, and `true` is not `1`.
"""

from __future__ import annotations

import contextlib
import functools
import itertools
import json
import math
from collections.abc import Hashable, Iterator
from fractions import Fraction
from typing import Any
from urllib.parse import urldefrag, urljoin

import referencing
import referencing.exceptions
import referencing.jsonschema
from jsonschema import FormatChecker, ValidationError
from jsonschema.exceptions import SchemaError, UndefinedTypeCheck
from jsonschema.protocols import Validator
from jsonschema.validators import Draft3Validator, Draft202012Validator, extend, validator_for
from jsonschema_specifications import REGISTRY as SPECIFICATIONS  # type: ignore[import-untyped]
from scorewire.core.errors import join_path
from scorewire.core.registry import ParamError
from scorewire.core.values import preview
from scorewire.regex.ecma import FLAGS as ECMA_FLAGS
from scorewire.regex.ecma import ecma_to_python
from scorewire.regex.engine import UserRegex, compile_user_regex
from scorewire.schema.fast import Test, compile_fast

# Keywords whose values are data, not subschemas: a "pattern" key inside them is not a regex.
_DATA_KEYWORDS = frozenset({"const", "enum", "default", "examples"})
# Keywords whose value maps names (or patterns) to subschemas.
_NAME_MAPS = frozenset(
    {"properties", "patternProperties", "$defs", "definitions", "dependentSchemas", "dependencies"}
)
_CACHE_LIMIT = 256
CACHE_BYTES = 32 * 1024 * 1024
"""Most bytes of compiled schemas shared through the cache, estimated as 8 bytes per byte
of schema JSON plus 32 per RE2 instruction of its patterns (measured ~18)."""


class CompiledSchema:
    """A validator for one schema, ready to report the first few failing paths."""

    __slots__ = ("_fast", "_validator", "program_size")

    def __init__(
        self, validator: Validator, program_size: int = 0, fast: Test | None = None
    ) -> None:
        self._validator = validator
        self._fast = fast
        """The quick validity test of a plain schema (`scorewire.schema.fast`), if any."""
        self.program_size = program_size
        """RE2 instructions of the schema's compiled patterns (their memory, mostly)."""

    def first_errors(self, instance: Any, limit: int = 3) -> tuple[list[str], bool]:
        """Up to `limit` "path: message" lines, and whether there were more."""
        if self._fast is not None and self._fast(instance):
            return [], False
        errors = list(itertools.islice(self._validator.iter_errors(instance), limit + 1))
        lines = [_error_line(e) for e in errors[:limit]]
        return lines, len(errors) > limit


def _error_line(err: ValidationError) -> str:
    message = err.message
    if len(message) > 120:
        # Messages quote the offending value first; keep both ends so the verdict shows.
        message = message[:50] + "…" + message[-69:]
    return f"{err.json_path}: {message}"


_cache: dict[str, tuple[CompiledSchema, int]] = {}
_cache_bytes = 0


def compile_schema(schema: dict[str, Any], field: str = "schema") -> CompiledSchema:
    """Check and compile a JSON Schema once; ParamError at the offending path if unusable.

    Identical schemas (by canonical JSON) share one compiled validator, within
    `_CACHE_LIMIT` schemas and `CACHE_BYTES`.
    """
    global _cache_bytes
    try:
        key = json.dumps(schema, sort_keys=True, allow_nan=False)
    except (TypeError, ValueError):
        key = ""
    if key and key in _cache:
        return _cache[key][0]
    patterns: dict[str, UserRegex] = {}
    compiled = CompiledSchema(_build(schema, field, patterns), fast=compile_fast(schema))
    compiled.program_size = sum(rx.program_size for rx in patterns.values())
    cost = 8 * len(key) + 32 * compiled.program_size
    if key and cost <= CACHE_BYTES:
        _cache[key] = (compiled, cost)
        _cache_bytes += cost
        while len(_cache) > _CACHE_LIMIT or _cache_bytes > CACHE_BYTES:
            _cache_bytes -= _cache.pop(next(iter(_cache)))[1]
    return compiled


def cached_bytes() -> int:
    """The estimated bytes of the schemas the cache holds now."""
    return _cache_bytes


def _build(schema: dict[str, Any], field: str, patterns: dict[str, UserRegex]) -> Validator:
    base = _draft(schema, field)
    try:
        # Not the metaschema's `regex` format: it would compile patterns with Python's
        # `re`; every pattern is compiled below, ECMA-262 meaning, on the safe engine.
        base.check_schema(schema, format_checker=_metaschema_formats(base))  # type: ignore[call-arg]
    except SchemaError as err:
        where = field
        for part in err.path:
            where = join_path(where, part if isinstance(part, int) else str(part))
        raise ParamError(where, f"invalid JSON Schema: {err.message}") from None
    seen: dict[str, bool] = {"unevaluatedProperties": False, "patternProperties": False}
    refs: list[tuple[str, str, tuple[str, ...]]] = []
    _walk(schema, field, base, patterns, seen, refs)
    if seen["unevaluatedProperties"] and seen["patternProperties"]:
        raise ParamError(
            field,
            "unevaluatedProperties together with patternProperties is not supported: "
            "jsonschema would evaluate those patterns with Python's backtracking regex engine",
        )
    _check_refs(base, schema, refs)
    cls: type[Validator] = extend(base, _keywords(base, patterns))  # type: ignore[no-untyped-call]
    # An empty registry: $refs resolve inside the document only, never over the network.
    validator = cls(schema, registry=referencing.Registry())
    _refuse_endless_refs(validator, field)
    return validator


def _keywords(base: type[Validator], patterns: dict[str, UserRegex]) -> dict[str, Any]:
    """The keywords of `base` replaced here, each only where the draft has it.

    Draft 3 spells `multipleOf` `divisibleBy` (there `multipleOf` is no keyword, its value
    unchecked by the metaschema); draft 2020-12 has no `additionalItems`.
    """
    own = base.VALIDATORS
    keywords: dict[str, Any] = {
        "pattern": _pattern_keyword(patterns),
        "patternProperties": _pattern_properties_keyword(patterns),
        "additionalProperties": _additional_properties_keyword(patterns),
        "multipleOf" if "multipleOf" in own else "divisibleBy": _multiple_of,
        "uniqueItems": _unique_items,
    }
    if "dependencies" not in own:
        keywords["dependencies"] = _dependencies
    if "additionalItems" in own:
        keywords["additionalItems"] = _additional_items_keyword(own["additionalItems"])
    return keywords


@functools.cache
def _metaschema_formats(base: type[Validator]) -> FormatChecker:
    """The draft's own format checker without `regex`.

    Copied from the draft's checker, not built as `FormatChecker(names)`: that looks the
    names up in jsonschema's class-wide registry, which files each format under one
    name only (the newest draft's), so draft 3's `ip-address` was a KeyError there.
    """
    formats = FormatChecker(())
    own: FormatChecker = base.FORMAT_CHECKER
    formats.checkers = {name: check for name, check in own.checkers.items() if name != "regex"}
    return formats


# One instance of each JSON type: a $ref cycle that never descends into the instance
# (`{"$ref": "#"}`, two $defs naming each other, an allOf of itself) recurses on them.
_PROBES: tuple[Any, ...] = (None, True, 0, "", [], {})


def _refuse_endless_refs(validator: Validator, field: str) -> None:
    """Refuse at load a schema whose $refs loop without consuming the instance.

    Such a schema recurses until RecursionError on every instance of some type, so
    validating one small instance of each type finds it once, here, instead of on
    every output.
    """
    for probe in _PROBES:
        try:
            validator.is_valid(probe)
        except RecursionError:
            raise ParamError(
                field,
                "the schema refers to itself without end: a $ref cycle never reaches a "
                f"value (found validating {json.dumps(probe)})",
            ) from None


def _draft(schema: dict[str, Any], field: str) -> type[Validator]:
    if "$schema" not in schema:
        return Draft202012Validator
    cls: type[Validator] | None = validator_for(schema, default=None)  # type: ignore[arg-type]
    if cls is None:
        raise ParamError(
            join_path(field, "$schema"),
            f"unknown JSON Schema draft {schema['$schema']!r}; use draft-03, -04, -06, -07, "
            "2019-09 or 2020-12",
        )
    return cls


def _walk(
    node: Any,
    where: str,
    base: type[Validator],
    patterns: dict[str, UserRegex],
    seen: dict[str, bool],
    refs: list[tuple[str, str, tuple[str, ...]]],
    scope: tuple[str, ...] = (),
) -> None:
    """Compile every pattern in the document, check what the draft's metaschema lets
    through, and note the keywords that need care.

    `scope` is the chain of identifiers (`$id`, `id`) above the node, so each `$ref` can
    be resolved against its own base URI."""
    if isinstance(node, list):
        for i, item in enumerate(node):
            _walk(item, join_path(where, i), base, patterns, seen, refs, scope)
        return
    if not isinstance(node, dict):
        return
    nested_id = _id_of(base, node) if where else None
    if nested_id is not None:
        scope = (*scope, nested_id)
    for key, value in node.items():
        here = join_path(where, str(key))
        if key in _DATA_KEYWORDS:
            continue
        if key == "pattern" and isinstance(value, str):
            _add_pattern(value, here, patterns)
            continue
        if key == "$ref" or (key == "$dynamicRef" and key in base.VALIDATORS):
            # Draft 4's metaschema does not say that a $ref is a string.
            if not isinstance(value, str):
                raise ParamError(here, f"{key} must be a string (a URI reference)")
            refs.append((value, here, scope))
            continue
        if key in ("type", "disallow") and base is Draft3Validator:
            _check_type_names(base, value, here)
        if key == "unevaluatedProperties":
            seen["unevaluatedProperties"] = True
        if key == "patternProperties" and isinstance(value, dict):
            seen["patternProperties"] = True
            for pattern in value:
                _add_pattern(pattern, join_path(here, pattern), patterns)
        if key in _NAME_MAPS and isinstance(value, dict):
            # Keys here are property or definition names, not keywords: "enum" or
            # "pattern" as a property name must still have its schema walked.
            for name, sub in value.items():
                _walk(sub, join_path(here, str(name)), base, patterns, seen, refs, scope)
        else:
            _walk(value, here, base, patterns, seen, refs, scope)


def _id_of(base: type[Validator], node: dict[str, Any]) -> str | None:
    """The identifier a schema declares in its draft (`$id`; `id` in drafts 3 and 4)."""
    if not all(isinstance(node.get(key, ""), str) for key in ("$id", "id")):
        return None  # where it is a keyword, the metaschema has refused a non-string
    found = base.ID_OF(node)  # type: ignore[attr-defined]
    return found if isinstance(found, str) else None


def _check_type_names(base: type[Validator], value: Any, where: str) -> None:
    """Refuse a type name draft 3 does not know.

    Its metaschema takes any string as a type (later drafts' metaschemas list the names),
    and jsonschema raises on an unknown one at every instance the keyword meets.
    """
    names = value if isinstance(value, list) else [value]
    for i, name in enumerate(names):
        if not isinstance(name, str):
            continue  # draft 3: a schema among the types
        try:
            base.TYPE_CHECKER.is_type(None, name)
        except UndefinedTypeCheck:
            at = join_path(where, i) if isinstance(value, list) else where
            raise ParamError(
                at,
                f"unknown type {name!r}: a type is one of string, number, integer, boolean, "
                "object, array, null (draft 3 also any)",
            ) from None


def _compile_pattern(pattern: str, where: str) -> UserRegex:
    # JSON Schema's patterns are ECMA-262: rewritten where the meaning differs, then run
    # on the same linear-time engine as every user pattern.
    return compile_user_regex(ecma_to_python(pattern, where), ECMA_FLAGS, where)


def _add_pattern(pattern: str, where: str, patterns: dict[str, UserRegex]) -> None:
    if pattern not in patterns:
        patterns[pattern] = _compile_pattern(pattern, where)


_CRAWL_FAULTS = (AttributeError, TypeError)
"""What `referencing` raises indexing some valid documents of drafts 3 to 7: it reads a
`dependencies` object whose first value is a schema as all schemas (a property list
beside it is then read as one), draft 3's single-schema `extends` as a list, and draft
3's `definitions` (no keyword there, so not checked by its metaschema) as schemas."""


def _check_refs(
    base: type[Validator], schema: dict[str, Any], refs: list[tuple[str, str, tuple[str, ...]]]
) -> None:
    """Resolve every `$ref` now, so a dangling or remote one fails at load, not per sample.

    Each ref is resolved against its own base URI (the `$id`s above it); the registry
    holds the document and the subschemas it identifies, never anything from outside.
    """
    if not refs:
        return
    meta = base.META_SCHEMA
    dialect = str(meta.get("$id") or meta.get("id") or "")
    spec = referencing.jsonschema.specification_with(
        dialect, default=referencing.Specification.OPAQUE
    )
    root = spec.create_resource(schema)
    root_uri = root.id() or ""
    registry: referencing.Registry[Any] = SPECIFICATIONS.combine(
        referencing.Registry().with_resource(root_uri, root)
    )
    # Not indexed when the crawl fails: references inside the root document still
    # resolve; one to an identifier nested in it is refused below (validation would
    # crawl again, and fail).
    with contextlib.suppress(*_CRAWL_FAULTS):
        registry = registry.crawl()
    for ref, where, scope in refs:
        base_uri = root_uri
        for scope_id in scope:
            base_uri = urljoin(base_uri, scope_id)
        try:
            registry.resolver(base_uri=base_uri).lookup(ref)
        except (referencing.exceptions.Unresolvable, *_CRAWL_FAULTS):
            document = urldefrag(urljoin(base_uri, ref)).url
            if scope and document in registry:
                # A fragment inside a document the schema does hold (an anchor form the
                # crawl may not index): left to validation, where a miss is an error score.
                continue
            raise ParamError(
                where, f"cannot resolve $ref {ref!r} (only references inside the schema work)"
            ) from None


# --- RE2-backed keywords ----------------------------------------------------------------


def _regex(patterns: dict[str, UserRegex], pattern: str) -> UserRegex:
    rx = patterns.get(pattern)
    if rx is None:
        # Every pattern of the document was compiled at load; this is only a safety net.
        rx = patterns[pattern] = _compile_pattern(pattern, "pattern")
    return rx


def _pattern_keyword(patterns: dict[str, UserRegex]) -> Any:
    def pattern(validator: Any, patrn: str, instance: Any, schema: Any) -> Iterator[Any]:
        if validator.is_type(instance, "string") and not _regex(patterns, patrn).search(instance):
            shown = instance if len(instance) <= 40 else instance[:39] + "…"
            yield ValidationError(f"{shown!r} does not match {patrn!r}")

    return pattern


def _decimal(x: int | float) -> Fraction:
    # A float as the decimal it was written as (repr is the shortest round trip), so
    # 0.0075 is a multiple of 0.0001 as a reader means it; an int exactly, at any size.
    return Fraction(x) if isinstance(x, int) else Fraction(repr(x))


def _multiple_of(validator: Any, divisor: Any, instance: Any, schema: Any) -> Iterator[Any]:
    """`multipleOf` in exact arithmetic: the library divides in floats, which overflows on
    integers beyond a double's range and rounds on large ones."""
    if not validator.is_type(instance, "number"):
        return
    if isinstance(instance, float) and not math.isfinite(instance):
        failed = True
    else:
        failed = _decimal(instance) % _decimal(divisor) != 0
    if failed:
        yield ValidationError(f"{preview(instance)} is not a multiple of {divisor!r}")


def _dependencies(validator: Any, dependencies: Any, instance: Any, schema: Any) -> Iterator[Any]:
    """Draft 7's `dependencies` kept in 2019-09 and 2020-12, which split it into
    `dependentRequired` and `dependentSchemas`: schemas written for draft 7 keep their
    meaning instead of the keyword being silently ignored."""
    if not validator.is_type(instance, "object") or not isinstance(dependencies, dict):
        return
    for name, dependency in dependencies.items():
        if name not in instance:
            continue
        if isinstance(dependency, list):
            for each in dependency:
                if each not in instance:
                    yield ValidationError(f"{each!r} is a dependency of {name!r}")
        else:
            yield from validator.descend(instance, dependency, schema_path=name)


def _additional_items_keyword(original: Any) -> Any:
    def additional_items(
        validator: Any, additional: Any, instance: Any, schema: Any
    ) -> Iterator[Any]:
        """The draft's own `additionalItems`, only beside an array of item schemas: the
        library took `items: true` (a boolean schema, drafts 6 on) for such an array and
        raised on its length."""
        if validator.is_type(schema.get("items"), "array"):
            yield from original(validator, additional, instance, schema)

    return additional_items


def _pattern_properties_keyword(patterns: dict[str, UserRegex]) -> Any:
    def pattern_properties(
        validator: Any, pattern_properties: dict[str, Any], instance: Any, schema: Any
    ) -> Iterator[Any]:
        if not validator.is_type(instance, "object"):
            return
        for patrn, subschema in pattern_properties.items():
            rx = _regex(patterns, patrn)
            for key, value in instance.items():
                if rx.search(key):
                    yield from validator.descend(value, subschema, path=key, schema_path=patrn)

    return pattern_properties


def _additional_properties_keyword(patterns: dict[str, UserRegex]) -> Any:
    def additional_properties(
        validator: Any, additional: Any, instance: Any, schema: Any
    ) -> Iterator[Any]:
        if not validator.is_type(instance, "object"):
            return
        properties = schema.get("properties", {})
        regexes = [_regex(patterns, p) for p in schema.get("patternProperties", {})]
        extras = [
            key
            for key in instance
            if key not in properties and not any(rx.search(key) for rx in regexes)
        ]
        if validator.is_type(additional, "object"):
            for extra in extras:
                yield from validator.descend(instance[extra], additional, path=extra)
        elif not additional and extras:
            listed = ", ".join(repr(e) for e in sorted(extras, key=str))
            verb = "was" if len(extras) == 1 else "were"
            yield ValidationError(
                f"Additional properties are not allowed ({listed} {verb} unexpected)"
            )

    return additional_properties


def _canonical(value: Any) -> Hashable:
    """A hashable form of a JSON value, equal exactly when JSON Schema calls values equal."""
    if value is True or value is False:
        return ("b", value)  # before numbers: bool is an int in Python, not in JSON
    if isinstance(value, float) and value.is_integer():
        return ("n", int(value))  # 1.0 == 1
    if isinstance(value, int | float):
        return ("n", value)
    if isinstance(value, str):
        return ("s", value)
    if value is None:
        return ("z",)
    if isinstance(value, list | tuple):
        return ("a", tuple(_canonical(v) for v in value))
    if isinstance(value, dict):
        return ("o", frozenset((k, _canonical(v)) for k, v in value.items()))
    return ("?", repr(value))  # not JSON; only a Python caller can get here


def _unique_items(validator: Any, unique: Any, instance: Any, schema: Any) -> Iterator[Any]:
    if not unique or not validator.is_type(instance, "array"):
        return
    seen: set[Hashable] = set()
    for item in instance:
        key = _canonical(item)
        if key in seen:
            yield ValidationError(f"{instance!r} has non-unique elements")
            return
        seen.add(key)
