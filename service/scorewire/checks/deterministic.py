"""Deterministic checks: free, repeatable, no model involved.

exact, contains, regex, json_schema, numeric_tolerance, length, and python (Python API
only). Each factory validates and compiles its parameters once; the function it returns
does the least per-sample work it can.

Reference resolution (exact, contains, numeric_tolerance) follows the catalog: a literal
`expected:` parameter, else the sample's expected value, or `path:` into it (dotted keys
with list indexes, `answer.items.0`, or a JSON pointer, `/answer/items/0`). A missing or
null reference is an error score (`MISSING_REFERENCE`), never a pass or a plain fail.
`path:` reads the sample, so it cannot be combined with a literal `expected:`.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, Field, ValidationError, WithJsonSchema
from pydantic import model_validator as _model_validator
from pydantic_core import PydanticCustomError
from scorewire.core.charges import KEY_PATH, charge_needles, charge_pattern, charge_schema
from scorewire.core.context import CheckContext
from scorewire.core.model import ErrorCode, Output, Sample, Score
from scorewire.core.registry import CheckFn, ParamError, Params, Uncosted, check_type
from scorewire.core.twin import (
    ContainsTwin,
    ExactTwin,
    JsonSchemaTwin,
    LengthTwin,
    RegexTwin,
    with_twin,
)
from scorewire.core.values import (
    NUMBER_THRESHOLD,
    PathPart,
    Reference,
    as_number,
    coerce_result,
    compile_path,
    difference,
    format_number,
    isclose,
    json_equal,
    json_kind,
    output_json,
    positional_arity,
    preview,
)
from scorewire.regex.engine import compile_user_regex, parse_flags
from scorewire.schema.full import compile_schema
from scorewire.text.units import count_words

FAMILY = "deterministic"

_EXPECTED_DOC = (
    "The reference as a literal; when absent the sample's expected value is used "
    "(or the value at `path` inside it)."
)
_PATH_DOC = (
    "Where the reference sits inside the sample's expected value: dotted keys with list "
    "indexes (`answer.items.0`) or a JSON pointer (`/answer/items/0`)."
)


def _text_normaliser(case_sensitive: bool, strip: bool) -> Callable[[str], str] | None:
    """How `exact` normalises text before comparing; None when it compares verbatim."""
    if case_sensitive and not strip:
        return None
    if case_sensitive:
        return str.strip
    if not strip:
        return str.casefold
    return lambda s: s.strip().casefold()


# --- exact -----------------------------------------------------------------------------


class ExactParams(Params):
    """Parameters of `exact`."""

    expected: Any = Field(None, description=_EXPECTED_DOC)
    path: str | None = Field(None, description=_PATH_DOC)
    case_sensitive: bool = Field(True, description="Compare text case-sensitively.")
    strip: bool = Field(
        True, description="Ignore leading and trailing white space of text before comparing."
    )


@check_type(
    "exact",
    description="The output equals the reference (text or JSON equality).",
    family=FAMILY,
    params=ExactParams,
    costs={
        "expected": Uncosted("a literal reference, compared with each output in linear time"),
        "path": KEY_PATH,
    },
)
def build_exact(p: ExactParams) -> CheckFn:
    """`exact`: the output equals the reference.

    A string reference is compared with `output.text`, after `strip` (default true:
    models end answers with stray newlines) and, with `case_sensitive: false`, Unicode
    case folding. Any other JSON reference (number, boolean, list, object) is compared
    with JSON equality (`1 == 1.0`, `true != 1`, key order ignored) to `output.value`,
    or to `output.text` parsed as JSON when the output has no value; text that is not
    JSON is a plain fail, with the reason. `strip`/`case_sensitive` apply to text only.
    """
    ref = Reference.from_params(p.expected, p.path)
    norm = _text_normaliser(p.case_sensitive, p.strip)
    twin = ExactTwin(
        literal=ref.literal,
        path=_path_parts(ref),
        case_sensitive=p.case_sensitive,
        strip=p.strip,
    )

    def compare(want: Any, output: Output) -> Score:
        if isinstance(want, str):
            got = output.text if norm is None else norm(output.text)
            if got == (want if norm is None else norm(want)):
                return Score(1.0, True, "output equals the expected text")
            return Score(0.0, False, f"expected {preview(want)}, got {preview(output.text)}")
        ok, value, err = output_json(output)
        if not ok:
            return Score(
                0.0,
                False,
                f"expected the JSON value {preview(want)}; the output is not JSON ({err})",
            )
        if json_equal(want, value):
            return Score(1.0, True, "output equals the expected JSON value")
        return Score(0.0, False, f"expected {preview(want)}, got {preview(value)}")

    if ref.has_literal:
        literal = ref.literal
        if isinstance(literal, str):
            want_text = literal if norm is None else norm(literal)

            def exact_text(sample: Sample, output: Output, ctx: CheckContext) -> Score:
                got = output.text if norm is None else norm(output.text)
                if got == want_text:
                    return Score(1.0, True, "output equals the expected text")
                return Score(0.0, False, f"expected {preview(literal)}, got {preview(output.text)}")

            return with_twin(exact_text, twin)

        def exact_literal(sample: Sample, output: Output, ctx: CheckContext) -> Score:
            return compare(literal, output)

        return with_twin(exact_literal, twin)

    def exact(sample: Sample, output: Output, ctx: CheckContext) -> Score:
        want = ref.resolve(sample)
        if isinstance(want, Score):
            return want
        return compare(want, output)

    return with_twin(exact, twin)


def _path_parts(ref: Reference) -> tuple[PathPart, ...] | None:
    """A reference's path steps as the native kernel reads them (None: no path)."""
    return None if ref.path is None else ref.path.parts


# --- contains --------------------------------------------------------------------------


class ContainsParams(Params):
    """Parameters of `contains`."""

    needles: list[str] | None = Field(
        None, description="The substrings to look for (instead of the reference)."
    )
    expected: Any = Field(
        None,
        description="Literal needles: a string, a list of strings, or an object with "
        "`must_include`. When absent, the sample's expected.must_include is used.",
    )
    path: str | None = Field(
        None,
        description="Where the needles sit in the sample's expected value (default "
        "`must_include`). " + _PATH_DOC.split(": ", 1)[1],
    )
    require_all: bool = Field(True, description="Pass only when every needle appears.")
    case_sensitive: bool = Field(True, description="Match needles case-sensitively.")


class _NoNeedles:
    """Why a reference value yields no needles, with the error code it deserves."""

    __slots__ = ("code", "message")

    def __init__(self, code: str, message: str) -> None:
        self.code = code
        self.message = message


def _needles_from(value: Any) -> tuple[str, ...] | _NoNeedles:
    """Needles from a reference value, or why it has none."""
    if isinstance(value, dict):
        if "must_include" not in value:
            return _NoNeedles(
                ErrorCode.MISSING_REFERENCE, "the expected object has no must_include"
            )
        value = value["must_include"]
    if isinstance(value, str):
        value = [value]
    bad = ErrorCode.INVALID_REFERENCE
    if not isinstance(value, list):
        return _NoNeedles(
            bad, f"needles must be a string or a list of strings, not {json_kind(value)}"
        )
    if not value:
        return _NoNeedles(bad, "the needle list is empty")
    for i, needle in enumerate(value):
        if not isinstance(needle, str):
            return _NoNeedles(bad, f"needle {i} is {json_kind(needle)}, not a string")
        if not needle:
            return _NoNeedles(bad, f"needle {i} is empty (it would match every output)")
    return tuple(value)


@check_type(
    "contains",
    description="Every (or any) needle appears in the output; value = fraction found.",
    family=FAMILY,
    params=ContainsParams,
    costs={"needles": charge_needles, "expected": charge_needles, "path": KEY_PATH},
)
def build_contains(p: ContainsParams) -> CheckFn:
    """`contains`: the needles appear in `output.text` as substrings.

    Needles come from `needles:`, else from the reference: a literal `expected:` or the
    sample's expected value, read at `path:` when given, else at `must_include` when the
    expected value is an object; an expected value that is itself a string or a list of
    strings is used as the needles. The value is the fraction of needles found; the check
    passes when all are found, or any one with `require_all: false`. Case-insensitive
    matching uses Unicode case folding. An empty needle list (or an empty needle) is a load
    error when literal and an error score (`INVALID_REFERENCE`) when it comes from the
    sample.
    """
    fold = not p.case_sensitive
    require_all = p.require_all
    if p.needles is not None:
        if p.expected is not None or p.path is not None:
            raise ParamError("needles", "give needles or expected/path, not both")
        got = _needles_from(p.needles)
        if isinstance(got, _NoNeedles):
            raise ParamError("needles", got.message)
        literal: tuple[str, ...] | None = got
    elif p.expected is not None:
        if p.path is not None:
            raise ParamError(
                "path",
                "path reads the sample's expected value; it cannot be combined with "
                "a literal expected",
            )
        got = _needles_from(p.expected)
        if isinstance(got, _NoNeedles):
            raise ParamError("expected", got.message)
        literal = got
    else:
        literal = None
    ref = Reference(None, compile_path(p.path, "path") if p.path is not None else None)

    def verdict(needles: tuple[str, ...], text: str) -> Score:
        hay = text.casefold() if fold else text
        missing = [n for n in needles if n not in hay]
        total = len(needles)
        found = total - len(missing)
        passed = not missing if require_all else found > 0
        if not missing:
            return Score(
                1.0, True, _FOUND_ALL[total] if total < 16 else f"found all {total} needles"
            )
        shown = ", ".join(preview(n, 40) for n in missing[:3])
        more = f" and {len(missing) - 3} more" if len(missing) > 3 else ""
        return Score(found / total, passed, f"found {found} of {total}; missing {shown}{more}")

    if literal is not None:
        needles = tuple(n.casefold() for n in literal) if fold else literal

        def contains_literal(sample: Sample, output: Output, ctx: CheckContext) -> Score:
            return verdict(needles, output.text)

        return with_twin(
            contains_literal,
            ContainsTwin(needles=needles, path=None, require_all=require_all, fold=fold),
        )

    def contains(sample: Sample, output: Output, ctx: CheckContext) -> Score:
        value = ref.resolve(sample)
        if isinstance(value, Score):
            return value
        got = _needles_from(value)
        if isinstance(got, _NoNeedles):
            return Score.fail_with_error(got.code, f"sample {sample.id!r}: {got.message}")
        over = _over_needle_limits(got, ctx)
        if over:
            return Score.fail_with_error(
                ErrorCode.INVALID_REFERENCE, f"sample {sample.id!r}: {over}"
            )
        return verdict(tuple([n.casefold() for n in got]) if fold else got, output.text)

    return with_twin(
        contains,
        ContainsTwin(needles=None, path=_path_parts(ref), require_all=require_all, fold=fold),
    )


_FOUND_ALL = ["", "found all 1 needle", *(f"found all {n} needles" for n in range(2, 16))]
"""The reasons of a full find, built once: most outputs have a few needles."""


def _over_needle_limits(needles: tuple[str, ...], ctx: CheckContext) -> str:
    """Why needles read from a sample are too many for the server's limits ("" if not).

    Literal needles are bounded when the request loads; these arrive with each case, so
    the server hands its limits to the checks in `ctx.extras` (by setting name).
    """
    most = ctx.extras.get("max_needles_per_request")
    if most is not None and len(needles) > most:
        return f"{len(needles)} needles, over max_needles_per_request ({most})"
    chars = ctx.extras.get("max_needle_chars_per_request")
    if chars is not None and sum(map(len, needles)) > chars:
        return f"the needles are over max_needle_chars_per_request ({chars} characters)"
    return ""


# --- regex -----------------------------------------------------------------------------


class RegexParams(Params):
    """Parameters of `regex`."""

    pattern: str = Field(description="A regular expression in Python syntax (run on RE2).")
    # Checked by `parse_flags` when the check is built, so that a bad name is reported at
    # its own path (`flags[1]`) rather than as a union of pydantic type errors.
    flags: Any = Field(
        0,
        description="Python re flags: their names, e.g. [IGNORECASE, MULTILINE] (also I, M, "
        "S for DOTALL, X for VERBOSE, A for ASCII), or the int of their bits, e.g. 2 for "
        "IGNORECASE.",
        json_schema_extra={
            "anyOf": [
                {"type": "integer", "minimum": 0},
                {"type": "array", "items": {"type": "string"}},
                {"type": "string"},
            ]
        },
    )
    must_match: bool = Field(
        True, description="Pass when the pattern matches (or, if false, when it does not)."
    )


@check_type(
    "regex",
    description="A Python `re` pattern (with flags) is found in the output, or not with "
    "must_match: false; linear time. `safe_regex` is seed 002's subset.",
    family=FAMILY,
    params=RegexParams,
    negated_by="must_match",
    costs={
        "pattern": charge_pattern,
        "flags": Uncosted("flag names or bits, read once when the check is built"),
    },
)
def build_regex(p: RegexParams) -> CheckFn:
    """`regex`: a substring search of `output.text`, as Python's `re.search` would answer.

    The pattern runs on RE2 in linear time (see `scorewire.regex.engine` for how Python's
    meaning is kept, `\\b`, `\\B` and `$` anywhere included, and which constructs are
    refused at load). `flags` are Python's names or bits (`parse_flags`); an unknown name
    or bit is a load error at `flags`. The empty pattern is what Python makes of it: it
    matches every output (so with `must_match: false` every output fails).
    `must_match: false` is applied by the engine, which inverts the result
    (`engine.passing`).
    """
    flags = parse_flags(p.flags, "flags")
    compiled = compile_user_regex(p.pattern, flags, "pattern")
    search = compiled.search

    def regex(sample: Sample, output: Output, ctx: CheckContext) -> Score:
        if search(output.text):
            return Score(1.0, True, "the pattern matches")
        return Score(0.0, False, "the pattern does not match")

    return with_twin(regex, RegexTwin(search=search, re2_match=compiled.re2_match))


# --- json_schema -----------------------------------------------------------------------


def _schema_type(value: Any) -> Any:
    if isinstance(value, type) and issubclass(value, BaseModel):
        return value
    if not isinstance(value, dict):
        raise PydanticCustomError(
            "schema_type", "schema must be a JSON Schema object (or a pydantic model class)"
        )
    return value


SchemaParam = Annotated[
    dict[str, Any] | type[BaseModel],
    BeforeValidator(_schema_type),
    WithJsonSchema({"type": "object", "description": "A JSON Schema; draft from $schema."}),
]


class JsonSchemaParams(Params):
    """Parameters of `json_schema`."""

    schema_: SchemaParam = Field(
        alias="schema",
        description="A JSON Schema (draft from $schema, default 2020-12), or in the Python "
        "API a pydantic model class.",
    )


@check_type(
    "json_schema",
    description="The output is JSON conforming to a full JSON Schema (draft 3 to 2020-12); "
    "`json_schema_v1` is seed 002's small subset.",
    family=FAMILY,
    params=JsonSchemaParams,
    costs={"schema": charge_schema},
)
def build_json_schema(p: JsonSchemaParams) -> CheckFn:
    """`json_schema`: the output is JSON and conforms; malformed schemas fail at load.

    The output is `output.value` when set, else `output.text` parsed as strict JSON (text
    that is not JSON fails, value 0, with the parser's reason). The reason of a failure
    lists up to three failing paths. With a JSON Schema dict, see `scorewire.schema.full`
    for the draft, `format` (an annotation, not asserted), `$ref` (inside the document
    only) and patterns: ECMA-262 as JSON Schema says (`\\d` is ASCII, `$` only at the very
    end, `\\p{Letter}` works), run in linear time; `multipleOf` is exact; the official
    JSON-Schema-Test-Suite is its test (tests/checks/test_json_schema_suite.py). With a pydantic
    model (Python API), conformance is the model's own validation (`model_validate`), so
    its validators and its strictness settings apply.
    """
    schema = p.schema_
    if isinstance(schema, type):
        return _pydantic_schema_check(schema)
    compiled = compile_schema(schema, "schema")

    def json_schema(sample: Sample, output: Output, ctx: CheckContext) -> Score:
        ok, value, err = output_json(output)
        if not ok:
            return Score(0.0, False, f"the output is not valid JSON: {err}")
        lines, more = compiled.first_errors(value)
        if not lines:
            return Score(1.0, True, "the output conforms to the schema")
        tail = "; and more" if more else ""
        return Score(0.0, False, "the output does not conform: " + "; ".join(lines) + tail)

    return with_twin(json_schema, JsonSchemaTwin(schema=schema))


def _pydantic_schema_check(model: type[BaseModel]) -> CheckFn:
    def json_schema_model(sample: Sample, output: Output, ctx: CheckContext) -> Score:
        try:
            if output.value is not None:
                model.model_validate(output.value)
            else:
                model.model_validate_json(output.text)
        except ValidationError as err:
            errors = err.errors(include_url=False)
            if errors and errors[0]["type"] == "json_invalid":
                return Score(0.0, False, f"the output is not valid JSON: {errors[0]['msg']}")
            lines = [f"{_loc_path(e['loc'])}: {e['msg']}" for e in errors[:3]]
            tail = "; and more" if len(errors) > 3 else ""
            return Score(
                0.0,
                False,
                f"the output does not conform to {model.__name__}: " + "; ".join(lines) + tail,
            )
        return Score(1.0, True, f"the output conforms to {model.__name__}")

    return json_schema_model


def _loc_path(loc: tuple[int | str, ...]) -> str:
    path = "$"
    for part in loc:
        path += f"[{part}]" if isinstance(part, int) else f".{part}"
    return path


# --- numeric_tolerance -----------------------------------------------------------------


class NumericToleranceParams(Params):
    """Parameters of `numeric_tolerance`."""

    expected: Any = Field(None, description=_EXPECTED_DOC + " A number or numeric string.")
    path: str | None = Field(None, description=_PATH_DOC)
    output_path: str | None = Field(
        None,
        description="Where the number sits in the output's JSON (output.value, or the text "
        "parsed as JSON); without it the whole output text is the number.",
    )
    abs_tol: float = Field(0.0, ge=0, allow_inf_nan=False, description="Absolute tolerance.")
    rel_tol: float = Field(
        1e-9, ge=0, allow_inf_nan=False, description="Relative tolerance (of the larger)."
    )


@check_type(
    "numeric_tolerance",
    description="The output number is within tolerance of the reference.",
    family=FAMILY,
    params=NumericToleranceParams,
    costs={
        "expected": Uncosted("a literal number, read once when the check is built"),
        "path": KEY_PATH,
        "output_path": KEY_PATH,
    },
)
def build_numeric_tolerance(p: NumericToleranceParams) -> CheckFn:
    """`numeric_tolerance`: `math.isclose(output, reference, rel_tol, abs_tol)`.

    Defaults are `math.isclose`'s: `rel_tol` 1e-9 and `abs_tol` 0, a comparison that only
    forgives floating-point rounding; set a tolerance to allow more. Numbers are JSON
    numbers or numeric strings (`"42"`, `" 3.5 "`; not booleans, NaN or infinities).
    The output number: at `output_path` in the output's JSON when given; else
    `output.value` when it is a number; else the whole stripped `output.text`. An output
    that is not a number is a plain fail with the reason; a reference that is not a number
    is an error score (`INVALID_REFERENCE`), as is a missing one (`MISSING_REFERENCE`).
    A JSON integer of any size is a number: beyond ±2^53 the same rule is evaluated in
    exact fractions, so no integer overflows or is rounded to a neighbour.
    """
    ref = Reference.from_params(p.expected, p.path)
    if ref.has_literal:
        literal = as_number(ref.literal)
        if literal is None:
            raise ParamError("expected", f"{preview(ref.literal)} is not a number")
        ref = Reference(literal, None)
    out_path = compile_path(p.output_path, "output_path") if p.output_path is not None else None
    abs_tol, rel_tol = p.abs_tol, p.rel_tol

    def read_output(output: Output) -> int | float | str:
        if out_path is None:
            value = output.value
            if isinstance(value, int | float) and not isinstance(value, bool):
                got = as_number(value)
                return got if got is not None else f"the output value {value!r} is not finite"
            got = as_number(output.text)
            return got if got is not None else f"the output is not a number: {preview(output.text)}"
        ok, doc, err = output_json(output)
        if not ok:
            return f"the output is not valid JSON ({err})"
        found, value, why = out_path.lookup(doc)
        if not found:
            return f"the output has no value at {out_path.text!r} ({why})"
        got = as_number(value)
        if got is None:
            return f"the output value at {out_path.text!r} is {preview(value)}, not a number"
        return got

    def numeric_tolerance(sample: Sample, output: Output, ctx: CheckContext) -> Score:
        want_raw = ref.resolve(sample)
        if isinstance(want_raw, Score):
            return want_raw
        want = as_number(want_raw)
        if want is None:
            return Score.fail_with_error(
                ErrorCode.INVALID_REFERENCE,
                f"sample {sample.id!r}: the reference {preview(want_raw)} is not a number",
            )
        got = read_output(output)
        if isinstance(got, str):
            return Score(0.0, False, got)
        if isclose(got, want, rel_tol=rel_tol, abs_tol=abs_tol):
            return Score(
                1.0, True, f"{format_number(got)} is within tolerance of {format_number(want)}"
            )
        return Score(
            0.0,
            False,
            f"{format_number(got)} differs from {format_number(want)} by "
            f"{format_number(abs(difference(got, want)))} "
            f"(abs_tol {abs_tol:g}, rel_tol {rel_tol:g})",
        )

    return numeric_tolerance


# --- length ----------------------------------------------------------------------------


class LengthParams(Params):
    """Parameters of `length`: at least one limit is required."""

    max_chars: int | None = Field(None, ge=0, description="At most this many code points.")
    max_words: int | None = Field(None, ge=0, description="At most this many words.")
    min_chars: int | None = Field(None, ge=0, description="At least this many code points.")

    @_model_validator(mode="after")
    def _one_limit(self) -> LengthParams:
        if self.max_chars is None and self.max_words is None and self.min_chars is None:
            raise PydanticCustomError(
                "no_limit", "set at least one of max_chars, max_words, min_chars"
            )
        return self


@check_type(
    "length",
    description="The output is within the character and word limits.",
    family=FAMILY,
    params=LengthParams,
)
def build_length(p: LengthParams) -> CheckFn:
    """`length`: limits on `output.text`, all inclusive.

    Characters are Unicode code points (`len(text)`, line breaks and spaces included);
    words are counted as people count them (`scorewire.text.units.count_words`:
    white-space-separated pieces holding a letter or digit, and each character of a
    script written without spaces, such as Chinese or Thai, so `max_words` means something
    there too). `min_chars` over `max_chars` is a load error. `word_count` (checkllm) and
    `output_length` (compact `length:`) are spellings of this type.
    """
    max_chars, max_words, min_chars = p.max_chars, p.max_words, p.min_chars
    if min_chars is not None and max_chars is not None and min_chars > max_chars:
        raise ParamError("min_chars", f"min_chars {min_chars} is over max_chars {max_chars}")

    def length(sample: Sample, output: Output, ctx: CheckContext) -> Score:
        text = output.text
        n = len(text)
        words = count_words(text) if max_words is not None else 0
        over_chars = max_chars is not None and n > max_chars
        under_chars = min_chars is not None and n < min_chars
        over_words = max_words is not None and words > max_words
        if not (over_chars or under_chars or over_words):
            return Score(1.0, True, f"within limits ({n} characters)")
        problems = []
        if over_chars:
            problems.append(f"{n} characters, over max_chars {max_chars}")
        if under_chars:
            problems.append(f"{n} characters, under min_chars {min_chars}")
        if over_words:
            problems.append(f"{words} words, over max_words {max_words}")
        return Score(0.0, False, "; ".join(problems))

    return with_twin(
        length, LengthTwin(max_chars=max_chars, max_words=max_words, min_chars=min_chars)
    )


# --- python ----------------------------------------------------------------------------


def _python_only(value: Any) -> Any:
    if isinstance(value, str) or not callable(value):
        raise PydanticCustomError(
            "python_api_only",
            "python checks exist only in the Python API; register a custom check on the "
            "server instead",
        )
    return value


class PythonParams(Params):
    """Parameters of `python`: a callable, so only the Python API can set it."""

    fn: Annotated[
        Callable[..., Any],
        BeforeValidator(_python_only),
        WithJsonSchema({"description": "A Python callable (Python API only)."}),
    ] = Field(description="fn(sample, output[, ctx]) returning a Score, a bool or 0..1.")
    threshold: float = Field(
        0.5, ge=0.0, le=1.0, description="A numeric result passes at or above this value."
    )


@check_type(
    "python",
    description="A Python function scores the output (Python API only).",
    family=FAMILY,
    params=PythonParams,
    threshold=NUMBER_THRESHOLD,
    in_process_only=True,
)
def build_python(p: PythonParams) -> CheckFn:
    """`python`: `fn(sample, output)` or `fn(sample, output, ctx)`, sync or async.

    It may return a Score, a bool (pass/fail) or a number in 0..1 (passing at `threshold`,
    default 0.5, or above, as custom checks do); anything else, or an exception, is an
    error score (`CHECK_FAILED`) naming the function, never a pass.
    """
    fn = p.fn
    name = getattr(fn, "__name__", type(fn).__name__)
    arity = positional_arity(fn)
    if arity is not None and arity not in (2, 3):
        raise ParamError("fn", f"{name} must take (sample, output) or (sample, output, ctx)")
    with_ctx = arity != 2

    def crashed(err: Exception) -> Score:
        return Score.fail_with_error(
            ErrorCode.CHECK_FAILED, f"{name} raised {type(err).__name__}: {err}"
        )

    if inspect.iscoroutinefunction(fn):

        async def python_async(sample: Sample, output: Output, ctx: CheckContext) -> Score:
            try:
                result = await (fn(sample, output, ctx) if with_ctx else fn(sample, output))
            except Exception as err:  # the user's code: an error score, not a crash
                return crashed(err)
            return coerce_result(result, name)

        return python_async

    def python(sample: Sample, output: Output, ctx: CheckContext) -> Score:
        try:
            result = fn(sample, output, ctx) if with_ctx else fn(sample, output)
        except Exception as err:  # the user's code: an error score, not a crash
            return crashed(err)
        return coerce_result(result, name)

    return python
