"""What a request's checks cost, measured from their raw specs before anything compiles.

One table here says, per check type, which raw parameters cost what: regex patterns
(count and characters), needles and phrases (count and characters), JSON Schemas (size,
keywords, and the patterns inside them), language codes; and for every check its name
and its examples. `measure_specs` charges all of a request's specs to its `RequestMeter`
(see `core.cost`) before any of them is validated or compiled, so a request over a limit
is refused before it costs the server anything (`charge_spec`, called by
`compile_check`, does the same one spec at a time for loaders that did not measure).
What only compiling can tell is charged as it happens: the regex engine charges each
RE2 program's size, and the language resources the models a request would load.

`whole_text_caps` and `metric_input_bytes` are the other half: what scoring one case
costs the checks that read its whole output (token counting, text metrics), checked per
case before it is scored.

The setting names are the names of `Settings` fields: `request_limits(settings)` turns
them into a meter's limits, and the refusal names the one that was exceeded.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from scorewire.checks.text_metrics import MAX_BLEU_CHARS, MAX_PYTHON_CHARS, MAX_ROUGE_TOKENS
from scorewire.core.cost import RequestMeter, current_meter
from scorewire.core.errors import join_path
from scorewire.core.registry import REGISTRY
from scorewire.core.values import json_length
from scorewire.regex.engine import PROGRAM_SIZE_SETTING
from scorewire.text.resources import LOADED_SETTING

if TYPE_CHECKING:
    from scorewire.engine.spec import CheckSpec, CompiledCheck
    from scorewire.settings import Settings

PATTERNS = "max_patterns_per_request"
PATTERN_CHARS = "max_pattern_chars_per_request"
NEEDLES = "max_needles_per_request"
NEEDLE_CHARS = "max_needle_chars_per_request"
SCHEMA_BYTES = "max_schema_bytes_per_request"
SCHEMA_KEYWORDS = "max_schema_keywords_per_request"
LANGUAGES = "max_languages_per_request"
NAME_CHARS = "max_check_name_chars"
EXAMPLE_CHARS = "max_example_chars_per_request"
JUDGE_SAMPLES = "max_judge_samples"
SUITE_TEXT_BYTES = "max_suite_bytes"
SUITE_BYTES = "max_suite_expanded_bytes"
SUITE_NODES = "max_suite_expanded_nodes"
PROMPT_CHARS = "max_prompt_chars_per_request"

REQUEST_SETTINGS = (
    PATTERNS,
    PATTERN_CHARS,
    PROGRAM_SIZE_SETTING,
    NEEDLES,
    NEEDLE_CHARS,
    SCHEMA_BYTES,
    SCHEMA_KEYWORDS,
    LANGUAGES,
    LOADED_SETTING,
    NAME_CHARS,
    EXAMPLE_CHARS,
    JUDGE_SAMPLES,
    SUITE_TEXT_BYTES,
    SUITE_BYTES,
    SUITE_NODES,
    PROMPT_CHARS,
)
"""The settings a `RequestMeter` enforces while a request's checks load (one of them,
`max_languages_loaded`, bounds the process: the models a request loads stay). The suite
document's three are limits the YAML loader reads from the current meter."""


def request_limits(settings: Settings) -> dict[str, int]:
    """The load-time limits of one request, by setting name."""
    return {name: int(getattr(settings, name)) for name in REQUEST_SETTINGS}


def request_meter(settings: Settings) -> RequestMeter:
    """A fresh meter for one request under `settings`."""
    return RequestMeter(request_limits(settings))


# --- what a raw spec costs -------------------------------------------------------------


def _pattern(meter: RequestMeter, value: Any, field: str) -> None:
    if isinstance(value, str):
        meter.charge(PATTERNS, 1, field, "regular expressions")
        meter.charge(PATTERN_CHARS, len(value), field, "pattern characters")


def _needles(meter: RequestMeter, value: Any, field: str) -> None:
    if isinstance(value, Mapping):
        value = value.get("must_include")
        field = join_path(field, "must_include")
    if isinstance(value, str):
        value = [value]
    if isinstance(value, list):
        meter.charge(NEEDLES, len(value), field, "needles")
        chars = sum(len(n) for n in value if isinstance(n, str))
        meter.charge(NEEDLE_CHARS, chars, field, "needle characters")


_DATA_KEYWORDS = frozenset({"const", "enum", "default", "examples"})
_NAME_MAPS = frozenset(
    {"properties", "patternProperties", "$defs", "definitions", "dependentSchemas", "dependencies"}
)


def _schema(meter: RequestMeter, value: Any, field: str) -> None:
    if not isinstance(value, Mapping):
        return  # a pydantic model class (Python API) or a type error reported by validation
    left = meter.left(SCHEMA_BYTES)
    try:
        # Counted as it is encoded, up to what the request has left: a schema that
        # aliases one big part many times is refused without being written out.
        size = json_length(value, left)
    except (ValueError, RecursionError):
        size = 0  # a cycle (Python callers) or nesting validation reports
    meter.charge(SCHEMA_BYTES, size, field, "bytes of JSON Schema")
    _walk_schema(meter, value, field)


def _walk_schema(meter: RequestMeter, node: Any, field: str) -> None:
    # Iterative, so a deeply nested schema cannot exhaust the stack here.
    stack: list[tuple[Any, str]] = [(node, field)]
    while stack:
        item, where = stack.pop()
        if isinstance(item, list):
            stack.extend((v, join_path(where, i)) for i, v in enumerate(item))
            continue
        if not isinstance(item, Mapping):
            continue
        meter.charge(SCHEMA_KEYWORDS, len(item), where, "JSON Schema keywords")
        for key, value in item.items():
            here = join_path(where, str(key))
            if key in _DATA_KEYWORDS:
                continue
            if key == "pattern":
                _pattern(meter, value, here)
            elif key == "patternProperties" and isinstance(value, Mapping):
                for p in value:
                    _pattern(meter, p, join_path(here, str(p)))
            if key in _NAME_MAPS and isinstance(value, Mapping):
                stack.extend((v, join_path(here, str(k))) for k, v in value.items())
            else:
                stack.append((value, here))


def _language(meter: RequestMeter, value: Any, field: str) -> None:
    if isinstance(value, str):
        meter.distinct(LANGUAGES, value.strip().lower(), field, "distinct language codes")


Charge = Callable[[RequestMeter, Any, str], None]

PARAM_COSTS: dict[str, dict[str, Charge]] = {
    "regex": {"pattern": _pattern},
    "safe_regex": {"pattern": _pattern},
    "contains": {"needles": _needles, "expected": _needles},
    "contains_text": {"value": _needles},
    "not_contains": {"value": _needles},
    "safety.forbidden": {"phrases": _needles},
    "json_schema": {"schema": _schema},
    "json_schema_v1": {"schema": _schema},
    "language": {"value": _language},
}
"""Check type -> raw parameter -> what it costs. A type not listed costs only its name."""


def measure_specs(meter: RequestMeter, specs: Iterable[tuple[CheckSpec, str]]) -> None:
    """Charge every spec of a request (and its `when:` predicates) before any compiles.

    Afterwards the meter counts the specs as paid, so compiling them charges only what
    only compiling can tell (RE2 program sizes).
    """
    for spec, path in specs:
        while True:
            _charge(meter, spec, path)
            if spec.when is None:
                break
            spec, path = spec.when, join_path(path, "when")
    meter.specs_measured = True


def charge_spec(spec: CheckSpec, path: str) -> None:
    """Charge what `spec` will cost to the current meter, unless the request was measured."""
    meter = current_meter()
    if meter is not None and not meter.specs_measured:
        _charge(meter, spec, path)


def _charge(meter: RequestMeter, spec: CheckSpec, path: str) -> None:
    meter.at_most(NAME_CHARS, len(spec.name), join_path(path, "name"), "the check name's length")
    if spec.examples:
        # Each example is scored at load (the check's self-test): an output in effect.
        chars = sum(len(e.text) for e in spec.examples)
        meter.charge(EXAMPLE_CHARS, chars, join_path(path, "examples"), "example characters")
    base = join_path(path, spec.params_path) if spec.params_path else path
    samples = spec.params.get("samples")
    if isinstance(samples, int | float) and not isinstance(samples, bool):
        check_type = REGISTRY.get(spec.type)
        if check_type is not None and check_type.uses_judge:
            meter.at_most(
                JUDGE_SAMPLES, int(samples), join_path(base, "samples"), "the judge samples asked"
            )
    costs = PARAM_COSTS.get(spec.type)
    if not costs:
        return
    for key, charge in costs.items():
        if key in spec.params:
            charge(meter, spec.params[key], join_path(base, key))


# --- what scoring a case costs ---------------------------------------------------------

WHOLE_TEXT_CHECKS: dict[str, int | None] = {
    "max_tokens": None,
    "min_tokens": None,
    "word_count": None,
    "bleu": MAX_BLEU_CHARS,
    "rouge_l": 20 * MAX_ROUGE_TOKENS,
    "is_valid_python": MAX_PYTHON_CHARS,
}
"""Checks that read the whole output per case, and the most of it each reads (None: all)."""


def whole_text_caps(checks: Sequence[CompiledCheck]) -> tuple[int | None, ...]:
    """The caps of a plan's whole-text checks (`when:` predicates included), once per plan."""
    caps: list[int | None] = []
    for c in checks:
        # The spelling the caller wrote: `word_count` reads the whole text, though its
        # results name the canonical `length`.
        spelled = c.check_type.name
        if spelled in WHOLE_TEXT_CHECKS:
            caps.append(WHOLE_TEXT_CHECKS[spelled])
        if c.when is not None:
            caps.extend(whole_text_caps([c.when]))
    return tuple(caps)


def metric_input_bytes(caps: Sequence[int | None], text_bytes: int) -> int:
    """What a case with a `text_bytes`-long output costs the whole-text checks of `caps`.

    A capped check refuses anything over its cap (an error score, cheaply), so it costs
    nothing then; a code point is at most 4 bytes, hence `4 * cap`.
    """
    return sum(text_bytes for cap in caps if cap is None or text_bytes <= 4 * cap)
