"""Deterministic checks of the output's form, with no reference: regex, json_schema, length.

Free, repeatable, no model involved: a pattern the output's text matches, a JSON Schema
its JSON conforms to, limits on its characters and words. Each factory validates and
compiles its parameters once; the function it returns does the least per-sample work it
can.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, Field, ValidationError, WithJsonSchema
from pydantic import model_validator as _model_validator
from pydantic_core import PydanticCustomError
from scorewire.core.charges import charge_pattern, charge_schema
from scorewire.core.context import CheckContext
from scorewire.core.model import Output, Sample, Score
from scorewire.core.registry import CheckFn, ParamError, Params, Uncosted, check_type
from scorewire.core.twin import JsonSchemaTwin, LengthTwin, RegexTwin, with_twin
from scorewire.core.values import output_json
from scorewire.regex.engine import compile_user_regex, parse_flags
from scorewire.schema.full import compile_schema
from scorewire.text.units import count_words

FAMILY = "deterministic"


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
