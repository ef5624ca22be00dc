"""Deterministic checks of the output against the reference: exact, contains, numeric_tolerance.

Free, repeatable, no model involved. Each factory validates and compiles its parameters
once; the function it returns does the least per-sample work it can.

Reference resolution follows the catalog: a literal `expected:` parameter, else the
sample's expected value, or `path:` into it (dotted keys with list indexes,
`answer.items.0`, or a JSON pointer, `/answer/items/0`). A missing or null reference is an
error score (`MISSING_REFERENCE`), never a pass or a plain fail. `path:` reads the sample,
so it cannot be combined with a literal `expected:`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pydantic import Field
from scorewire.core.charges import KEY_PATH, charge_needles
from scorewire.core.context import CheckContext
from scorewire.core.model import ErrorCode, Output, Sample, Score
from scorewire.core.registry import CheckFn, ParamError, Params, Uncosted, check_type
from scorewire.core.twin import ContainsTwin, ExactTwin, with_twin
from scorewire.core.values import (
    PathPart,
    Reference,
    as_number,
    compile_path,
    difference,
    format_number,
    isclose,
    json_equal,
    json_kind,
    output_json,
    preview,
)

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
