"""What a request's checks cost, measured from their raw specs before anything compiles.

Each check type declares which of its raw parameters cost what (`CheckType.costs`, with
the charges of `core.charges`: regex patterns, needles and phrases, JSON Schemas,
language codes); every check costs its name and its examples, and a judge-backed one
its samples. `measure_specs` charges all of a request's specs to its `RequestMeter`
(see `core.cost`) before any of them is validated or compiled, so a request over a limit
is refused before it costs the server anything (`charge_spec`, called by
`compile_check`, does the same one spec at a time for loaders that did not measure).
What only compiling can tell is charged as it happens: the regex engine charges each
RE2 program's size, and the language resources the models a request would load.

`whole_text_caps` and `metric_input_bytes` are the other half: what scoring one case
costs the checks that read its whole output (token counting, text metrics: those that
declare `WholeText`), checked per case before it is scored.

The setting names are the names of `Settings` fields: `request_limits(settings)` turns
them into a meter's limits, and the refusal names the one that was exceeded.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import scorewire.checks  # noqa: F401 - registers the built-in types, whose costs are read here
from scorewire.core.charges import (
    LANGUAGES,
    NEEDLE_CHARS,
    NEEDLES,
    PATTERN_CHARS,
    PATTERNS,
    SCHEMA_BYTES,
    SCHEMA_KEYWORDS,
)
from scorewire.core.cost import RequestMeter, current_meter
from scorewire.core.errors import join_path
from scorewire.core.registry import REGISTRY
from scorewire.regex.engine import PROGRAM_SIZE_SETTING
from scorewire.text.resources import LOADED_SETTING

if TYPE_CHECKING:
    from scorewire.engine.spec import CheckSpec, CompiledCheck
    from scorewire.settings import Settings

NAME_CHARS = "max_check_name_chars"
EXAMPLE_CHARS = "max_example_chars_per_request"
JUDGE_SAMPLES = "max_judge_samples"
JUDGE_CALLS = "judge_watch__max_calls_per_output"
"""A nested setting (`Settings.judge_watch.max_calls_per_output`), named as its variable is."""
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
    JUDGE_CALLS,
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
    return {name: int(_setting(settings, name)) for name in REQUEST_SETTINGS}


def _setting(settings: Settings, name: str) -> Any:
    """A setting by name; `part__field` is a field of a nested part."""
    value: Any = settings
    for attribute in name.split("__"):
        value = getattr(value, attribute)
    return value


def request_meter(settings: Settings) -> RequestMeter:
    """A fresh meter for one request under `settings`."""
    return RequestMeter(request_limits(settings))


# --- what a raw spec costs -------------------------------------------------------------


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
    check_type = REGISTRY.get(spec.type)
    if check_type is None:
        return  # compiling reports the unknown type
    base = join_path(path, spec.params_path) if spec.params_path else path
    if check_type.uses_judge:
        _charge_judge_calls(meter, spec.params, base)
    for key, charge in check_type.charges.items():
        if key in spec.params:
            charge(meter, spec.params[key], join_path(base, key))


def _charge_judge_calls(meter: RequestMeter, params: Mapping[str, Any], base: str) -> None:
    """A judge-backed check's samples, and its judge calls per output: its judges (a
    panel's, or a cascade's stages, each asked as a single judge) times the samples."""
    samples = params.get("samples")
    n = int(samples) if isinstance(samples, int | float) and not isinstance(samples, bool) else 1
    if samples is not None:
        meter.at_most(JUDGE_SAMPLES, n, join_path(base, "samples"), "the judge samples asked")
    key = next((k for k in ("judges", "cascade") if isinstance(params.get(k), list)), "samples")
    judges = len(params[key]) if key != "samples" else 1
    meter.at_most(
        JUDGE_CALLS,
        judges * n,
        join_path(base, key),
        f"the judge calls per output ({judges} judges × {n} samples)",
    )


def whole_text_caps(checks: Sequence[CompiledCheck]) -> tuple[int | None, ...]:
    """The caps of a plan's whole-text checks (`when:` predicates included), once per plan."""
    caps: list[int | None] = []
    for c in checks:
        # The type the caller wrote: `word_count` reads the whole text, though its
        # results name the canonical `length`.
        reads = c.check_type.reads_whole_text
        if reads is not None:
            caps.append(reads.max_chars)
        if c.when is not None:
            caps.extend(whole_text_caps([c.when]))
    return tuple(caps)


def metric_input_bytes(caps: Sequence[int | None], text_bytes: int) -> int:
    """What a case with a `text_bytes`-long output costs the whole-text checks of `caps`.

    A capped check refuses anything over its cap (an error score, cheaply), so it costs
    nothing then; a code point is at most 4 bytes, hence `4 * cap`.
    """
    return sum(text_bytes for cap in caps if cap is None or text_bytes <= 4 * cap)
